import { type ErrorClass, ProviderError, retryAfterMs } from '../../canonical/index.js';
import { classifyHttpStatus, providerText, requestIdFrom } from '../upstream-errors.js';
import type { GeminiErrorBody } from './gemini-wire.js';

type GoogleStatus = GeminiErrorBody['error'];

/** A non-2xx answer: Google's `{error:{code,message,status,details}}` envelope → typed ProviderError. */
/** Google front ends answer with these when they identify a request at all. */
const REQUEST_ID_HEADERS = ['x-goog-request-id', 'x-request-id'];

export function geminiHttpError(status: number, headers: Record<string, string | string[] | undefined>, text: string): ProviderError {
  const error = parseEnvelope(text);
  return new ProviderError(classify(status, error), `provider returned ${status}`, status, retryAfterMs(headers) ?? retryDelayMs(error), {
    providerRequestId: requestIdFrom(headers, REQUEST_ID_HEADERS),
    providerMessage: providerText(error?.message),
  });
}

/** An error object delivered inside a 200 stream (Gemini sends the same envelope as a `data:` payload). */
export function geminiStreamError(error: GoogleStatus, providerRequestId: string | null = null): ProviderError {
  const status = typeof error.code === 'number' ? error.code : 500;
  return new ProviderError(classify(status, error), 'the provider reported an error inside the stream', null, retryDelayMs(error), {
    providerRequestId,
    providerMessage: providerText(error.message ?? error.status),
  });
}

function classify(status: number, error: GoogleStatus | null): ErrorClass {
  const reasons = (error?.details ?? []).map((d) => d.reason ?? '');
  // An unusable key is a 400 INVALID_ARGUMENT at Google, but it is a credential problem, not the request's.
  if (reasons.some((r) => /^API_KEY_/.test(r)) || /API key not valid|API key expired/i.test(error?.message ?? '')) return 'auth';
  switch (error?.status) {
    case 'UNAUTHENTICATED':
    case 'PERMISSION_DENIED':
      return 'auth';
    case 'RESOURCE_EXHAUSTED':
      return 'rate_limited';
    case 'UNAVAILABLE':
      return 'overloaded';
    case 'DEADLINE_EXCEEDED':
      return 'timeout';
    case 'INTERNAL':
      return 'transient';
    default:
      break;
  }
  const errorClass = classifyHttpStatus(status);
  if (errorClass === 'invalid_request' && /token count|exceeds the maximum number of tokens|context (length|window)|too many tokens/i.test(error?.message ?? '')) {
    return 'context_length';
  }
  return errorClass;
}

/** google.rpc.RetryInfo `retryDelay` ("37s", "1.5s"): what Google sends instead of a retry-after header. */
function retryDelayMs(error: GoogleStatus | null): number | null {
  for (const detail of error?.details ?? []) {
    if (!detail['@type']?.endsWith('google.rpc.RetryInfo') || typeof detail.retryDelay !== 'string') continue;
    const seconds = /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay.trim());
    if (seconds) return Math.ceil(Number(seconds[1]) * 1000);
  }
  return null;
}

function parseEnvelope(text: string): GoogleStatus | null {
  try {
    const parsed = JSON.parse(text) as unknown;
    // Some Google front ends answer with a one-element array of envelopes.
    const envelope = (Array.isArray(parsed) ? parsed[0] : parsed) as Partial<GeminiErrorBody> | undefined;
    return envelope?.error && typeof envelope.error === 'object' ? envelope.error : null;
  } catch {
    return null; // an HTML error page from a proxy is not passed on
  }
}
