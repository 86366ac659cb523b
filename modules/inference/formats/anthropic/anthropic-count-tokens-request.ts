import { type ChatRequest, invalidRequest, unsupportedParameter, withThoughtSignatures } from '../../../canonical/index.js';
import { parseAnthropicMessagesRequest } from './anthropic-messages-request.js';

/** What Anthropic's count_tokens takes: the prompt, not the generation settings. */
const COUNT_FIELDS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice']);

/**
 * Anthropic `POST /v1/messages/count_tokens` body → the canonical request it counts. It is validated
 * exactly as a Messages body (same errors, same bounds), without `max_tokens`, which counting does not
 * need; generation settings are refused, as Anthropic refuses them there.
 */
export function parseAnthropicCountTokensRequest(body: unknown): ChatRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidRequest('The request body must be a JSON object.');
  for (const [key, value] of Object.entries(body)) {
    if (COUNT_FIELDS.has(key) || value === undefined || value === null) continue;
    throw unsupportedParameter(key, 'count_tokens takes model, messages, system, tools and tool_choice only; remove it.');
  }
  // max_tokens leads the copy (the body's own keys are the client's: no Object.assign); a null one in the
  // body, which the loop above lets through, is replaced by 1 again, as when it came last.
  const messagesBody = { max_tokens: 1, ...body };
  messagesBody.max_tokens = 1;
  // Signed tool-call ids are split as for a Messages call, so a provider's count sees the plain ids.
  return withThoughtSignatures(parseAnthropicMessagesRequest(messagesBody));
}

/** Anthropic's answer: `{input_tokens}`. */
export const anthropicTokenCount = {
  parse: parseAnthropicCountTokensRequest,
  answer: (inputTokens: number) => ({ input_tokens: inputTokens }),
};
