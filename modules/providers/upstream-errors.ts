import { ProviderError, retryAfterMs } from '../canonical/provider-error.js';
import { SseOverflowError } from './streaming/sse-decoder.js';

/** Maps transport failures (undici / Node errors) to typed classes; never echoes URLs or headers. */
export function transportError(error: unknown, signal: AbortSignal): ProviderError {
  if (error instanceof ProviderError) return error;
  if (signal.aborted) return new ProviderError('cancelled', 'the request was cancelled');
  // An event past the decoder's bound is a broken (or hostile) upstream, not a transport failure.
  if (error instanceof SseOverflowError) return new ProviderError('malformed_response', 'the provider sent a stream event over the size limit');
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

export function httpError(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  errorClass: ProviderError['errorClass'],
  detail: string | null,
): ProviderError {
  const message = detail ? `provider returned ${status}: ${sanitizeDetail(detail)}` : `provider returned ${status}`;
  return new ProviderError(errorClass, message, status, retryAfterMs(headers));
}

/**
 * Provider error messages can help a caller fix a request, but must not carry secrets or internal
 * addresses: keep a bounded message with keys and URLs masked.
 */
export function sanitizeDetail(detail: string): string {
  return detail
    .replace(/https?:\/\/\S+/g, '[url]')
    .replace(/\b(sk|pk|rk|key|AKIA|ASIA)[-_A-Za-z0-9]{12,}\b/g, '[redacted]')
    .replace(/\s+/g, ' ')
    .slice(0, 300);
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
