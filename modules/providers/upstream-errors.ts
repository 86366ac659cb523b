import { type HeaderMap, ProviderError, firstHeader, retryAfterMs } from '../canonical/index.js';
import { knownSecretForms, redactText } from '../../src/kernel/index.js';
import { OutboundAddressRefused, OutboundPolicyViolation } from './outbound-connector.js';
import { SseOverflowError } from './streaming/sse-decoder.js';

type Headers = HeaderMap;

/** Maps transport failures (undici / Node errors) to typed classes; never echoes URLs or headers. */
export function transportError(error: unknown, signal: AbortSignal): ProviderError {
  if (error instanceof ProviderError) return error;
  if (signal.aborted) return new ProviderError('cancelled', 'the request was cancelled');
  // An event past the decoder's bound is a broken (or hostile) upstream, not a transport failure.
  if (error instanceof SseOverflowError) return new ProviderError('malformed_response', 'the provider sent a stream event over the size limit');
  if (error instanceof OutboundPolicyViolation || (error as { cause?: unknown })?.cause instanceof OutboundPolicyViolation) return new OutboundAddressRefused();
  const code = (error as { code?: string })?.code ?? (error as { cause?: { code?: string } })?.cause?.code;
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new ProviderError('timeout', 'timed out connecting to the provider');
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new ProviderError('timeout', 'the provider did not answer in time');
    case 'UND_ERR_BODY_TIMEOUT':
      return new ProviderError('timeout', 'the provider stopped sending data (idle timeout)');
    case 'ECONNREFUSED':
    case 'ECONNRESET':
    case 'EPIPE':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return new ProviderError('connection', 'the connection to the provider failed');
    case 'UND_ERR_ABORTED':
    case 'ABORT_ERR':
      return new ProviderError('cancelled', 'the request was cancelled');
    default:
      return new ProviderError('unknown', 'the provider call failed');
  }
}

/** Classification shared by providers that use HTTP statuses conventionally. */
export function classifyHttpStatus(status: number): ProviderError['errorClass'] {
  if (status === 401 || status === 403) return 'auth';
  if (status === 408) return 'timeout';
  if (status === 413) return 'context_length';
  if (status === 429) return 'rate_limited';
  if (status === 503 || status === 529) return 'overloaded';
  if (status === 504) return 'timeout';
  if (status >= 500) return 'transient';
  if (status >= 400) return 'invalid_request';
  return 'unknown';
}

/** Where OpenAI-style servers put their request id; adapters pass their provider's own header names. */
export const DEFAULT_REQUEST_ID_HEADERS = ['x-request-id', 'request-id'] as const;

/**
 * A non-2xx answer. The message is ours (`provider returned 404`); the provider's own words, redacted,
 * ride along in `providerMessage`, with the provider's request id from the response headers.
 */
export function httpError(
  status: number,
  headers: Headers,
  errorClass: ProviderError['errorClass'],
  detail: string | null,
  requestIdHeaders: readonly string[] = DEFAULT_REQUEST_ID_HEADERS,
): ProviderError {
  return new ProviderError(errorClass, `provider returned ${status}`, status, retryAfterMs(headers), {
    providerRequestId: requestIdFrom(headers, requestIdHeaders),
    providerMessage: providerText(detail),
  });
}

/**
 * Provider text (an error message, a refusal reason) made safe to keep: every credential the gateway
 * holds, URLs, hosts, addresses, DSNs and token-like strings removed, one line, capped. Null when empty.
 */
export function providerText(detail: string | null | undefined): string | null {
  if (!detail) return null;
  const text = redactText(detail);
  return text.length > 0 ? text : null;
}

/**
 * The first plausible request id among `names`. An id is opaque text from the provider, passed to the
 * client as is: it must look like an id and must not carry any credential the gateway holds.
 */
export function requestIdFrom(headers: Headers, names: readonly string[]): string | null {
  for (const name of names) {
    const raw = headers[name];
    const value = firstHeader(raw)?.trim();
    if (value && plausibleRequestId(value)) return value;
  }
  return null;
}

/** The same failure, naming the provider's request id when it did not yet (errors raised inside a stream). */
export function withProviderRequestId(error: ProviderError, providerRequestId: string | null): ProviderError {
  if (error.providerRequestId || !providerRequestId || error.constructor !== ProviderError) return error;
  return new ProviderError(error.errorClass, error.message, error.httpStatus, error.retryAfterMs, {
    providerRequestId,
    providerMessage: error.providerMessage,
  });
}

export function plausibleRequestId(value: string | null | undefined): value is string {
  if (!value || !/^[A-Za-z0-9][A-Za-z0-9._:/+=-]{0,127}$/.test(value)) return false;
  return !knownSecretForms().some((form) => value.includes(form));
}

/** Reads at most `limit` bytes of an error body (never the unbounded upstream stream). */
export async function readBounded(body: AsyncIterable<Uint8Array> & { destroy?: () => void }, limit = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = Buffer.from(chunk);
    chunks.push(buf);
    size += buf.length;
    if (size >= limit) {
      body.destroy?.();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}
