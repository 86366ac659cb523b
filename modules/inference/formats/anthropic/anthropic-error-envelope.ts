import { ContextLengthExceeded, type GatewayError } from '../../../canonical/index.js';
import type { AnthropicErrorBody } from '../../../providers/index.js';

/** Anthropic's `error.type` for each status, as the official SDKs and clients expect. */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 408:
    case 504:
      return 'timeout_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/** `{type: "error", error: {type, message}}` — the message names the field and the fix. */
export function anthropicErrorBody(error: GatewayError): AnthropicErrorBody {
  const message = error instanceof ContextLengthExceeded ? anthropicContextMessage(error) : error.message;
  return { type: 'error', error: { type: anthropicErrorType(error.status), message } };
}

/**
 * Anthropic's wording, which its clients match on (LangChain's ChatAnthropic raises its context-overflow
 * error only for "prompt is too long"): current Anthropic models refuse only a prompt over the window
 * (a prompt plus `max_tokens` over it stops at the window instead), so the gateway's refusal of a prompt
 * plus output over every window says the total, and the split after it.
 */
function anthropicContextMessage(error: ContextLengthExceeded): string {
  const { inputTokens, outputTokens, contextWindow } = error.numbers;
  if (outputTokens === null || inputTokens > contextWindow) return `prompt is too long: ${inputTokens} tokens > ${contextWindow} maximum${error.provenance}`;
  const split = [`${inputTokens} input tokens + ${outputTokens} max_tokens`, ...error.provenanceParts].join('; ');
  return `prompt is too long: ${error.requestedTokens} tokens > ${contextWindow} maximum (${split})`;
}
