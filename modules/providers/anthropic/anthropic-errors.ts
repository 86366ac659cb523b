import { type ErrorClass, ProviderError, retryAfterMs } from '../../canonical/index.js';
import { classifyHttpStatus, providerText, requestIdFrom } from '../upstream-errors.js';
import type { AnthropicErrorBody } from './anthropic-wire.js';

type Headers = Record<string, string | string[] | undefined>;

const CONTEXT_LENGTH = /prompt is too long|context (window|length)|too many (input )?tokens|exceeds? the (model'?s )?(maximum|context)/i;

/**
 * Anthropic's error `type` is more precise than its status (a 400 can be an over-long prompt, a 529
 * is an overload, not a server bug), so it decides first and the status fills in when a body is
 * missing or unknown.
 */
export function classifyAnthropicError(status: number | null, type: string | null, message: string | null): ErrorClass {
  switch (type) {
    case 'rate_limit_error':
      return 'rate_limited';
    case 'overloaded_error':
      return 'overloaded';
    case 'authentication_error':
    case 'permission_error':
    case 'billing_error':
      return 'auth';
    case 'invalid_request_error':
      return message && CONTEXT_LENGTH.test(message) ? 'context_length' : 'invalid_request';
    case 'request_too_large':
      return 'context_length';
    case 'not_found_error':
      return 'invalid_request';
    case 'timeout_error':
      return 'timeout';
    case 'api_error':
      return 'transient';
    default:
      if (status === null) return 'transient'; // an error event inside a stream with an unknown type
      if (status === 529) return 'overloaded';
      return classifyHttpStatus(status);
  }
}

/** Anthropic names its request id `request-id`. */
const REQUEST_ID_HEADERS = ['request-id', 'x-request-id'];

/** A non-2xx answer → ProviderError with our message, the provider's redacted one, its request id and the retry-after hint. */
export function anthropicHttpError(status: number, headers: Headers, text: string): ProviderError {
  const parsed = parseErrorBody(text);
  const errorClass = classifyAnthropicError(status, parsed?.type ?? null, parsed?.message ?? null);
  return new ProviderError(errorClass, `provider returned ${status}`, status, retryAfterMs(headers), {
    providerRequestId: requestIdFrom(headers, REQUEST_ID_HEADERS),
    providerMessage: providerText(parsed?.message),
  });
}

/** An `event: error` frame inside a 200 stream: always a failure, never a clean stop. */
export function anthropicStreamError(data: string, providerRequestId: string | null = null): ProviderError {
  const parsed = parseErrorBody(data);
  return new ProviderError(
    classifyAnthropicError(null, parsed?.type ?? null, parsed?.message ?? null),
    'the provider reported an error inside the stream',
    null,
    null,
    { providerRequestId, providerMessage: providerText(parsed?.message ?? parsed?.type) },
  );
}

function parseErrorBody(text: string): { type: string | null; message: string | null } | null {
  try {
    const body = JSON.parse(text) as Partial<AnthropicErrorBody>;
    if (!body || typeof body !== 'object' || !body.error || typeof body.error !== 'object') return null;
    return {
      type: typeof body.error.type === 'string' ? body.error.type : null,
      message: typeof body.error.message === 'string' ? body.error.message : null,
    };
  } catch {
    return null; // a non-JSON error body (an HTML error page) is not passed on
  }
}
