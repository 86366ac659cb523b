import { type ChatRequest, withThoughtSignatures } from '../../../canonical/index.js';
import { parseResponsesRequest } from './responses-request.js';

/**
 * OpenAI `POST /v1/responses/input_tokens`: the body of a response request (validated exactly as one,
 * so its errors are the same) → `{object: "response.input_tokens", input_tokens}`.
 */
export const responsesInputTokens = {
  parse: (body: unknown): ChatRequest => withThoughtSignatures(parseResponsesRequest(body)),
  answer: (inputTokens: number) => ({ object: 'response.input_tokens', input_tokens: inputTokens }),
};
