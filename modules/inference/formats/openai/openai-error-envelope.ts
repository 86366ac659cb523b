import { ContextLengthExceeded, type GatewayError } from '../../../canonical/index.js';

/**
 * OpenAI's `error.type` for each status, as the official SDKs expect. A 404 is an `invalid_request_error` there
 * (an unknown model with the code `model_not_found`, an unknown response or file id with none): OpenAI has no
 * `not_found_error` type, which is Anthropic's.
 */
export function openAiErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 402) return 'insufficient_quota';
  if (status >= 500) return status === 503 ? 'service_unavailable_error' : 'server_error';
  return 'invalid_request_error';
}

export function openAiErrorBody(error: GatewayError): Record<string, unknown> {
  return {
    error: {
      message: error instanceof ContextLengthExceeded ? chatCompletionsContextMessage(error) : error.message,
      type: openAiErrorType(error.status),
      param: error.param,
      code: error.code,
      ...(error.detail ?? {}),
    },
  };
}

/**
 * OpenAI's own wording for a prompt that does not fit, which clients and frameworks parse (LangChain and
 * LiteLLM-style clients key on the code, some read the numbers out of the message).
 */
function chatCompletionsContextMessage(error: ContextLengthExceeded): string {
  const { inputTokens, outputTokens, contextWindow } = error.numbers;
  const asked = outputTokens === null
    ? `However, your messages resulted in ${inputTokens} tokens. Please reduce the length of the messages.`
    : `However, you requested ${error.requestedTokens} tokens (${inputTokens} in the messages, ${outputTokens} in the completion). Please reduce the length of the messages or completion.`;
  return `This model's maximum context length is ${contextWindow} tokens. ${asked}${error.provenance}`;
}
