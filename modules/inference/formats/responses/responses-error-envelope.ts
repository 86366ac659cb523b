import { ContextLengthExceeded, type GatewayError } from '../../../canonical/index.js';
import { openAiErrorBody, openAiErrorType } from '../openai/openai-error-envelope.js';

/**
 * The Responses API's error envelope is OpenAI's; only a prompt that does not fit has its own wording
 * (and names `input`, not `messages`), which the gateway follows with the numbers.
 */
export function responsesErrorBody(error: GatewayError): Record<string, unknown> {
  if (!(error instanceof ContextLengthExceeded)) return openAiErrorBody(error);
  const { inputTokens, outputTokens, contextWindow } = error.numbers;
  const asked = outputTokens === null ? `${inputTokens} input tokens` : `${inputTokens} input tokens + ${outputTokens} output tokens`;
  const numbers = [`${asked} > ${contextWindow} maximum`, ...error.provenanceParts].join('; ');
  return {
    error: {
      message: `Your input exceeds the context window of this model. Please adjust your input and try again. (${numbers})`,
      type: openAiErrorType(error.status),
      param: error.param === 'messages' ? 'input' : error.param,
      code: error.code,
      ...(error.detail ?? {}),
    },
  };
}
