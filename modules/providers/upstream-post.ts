import type { Dispatcher } from 'undici';
import { ProviderError } from '../canonical/index.js';
import { readBounded, transportError } from './upstream-errors.js';

type Headers = Record<string, string | string[] | undefined>;

export interface UpstreamTarget {
  dispatcher: Dispatcher;
  baseUrl: URL;
  signal: AbortSignal;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
  /** The attempt's trace context headers; sent as they are (nothing else may be added to a provider call). */
  traceHeaders?: Record<string, string>;
}

/** Turns a provider's non-2xx answer (status, headers, bounded body text) into a typed error. */
export type HttpErrorMapper = (status: number, headers: Headers, text: string) => ProviderError;

/**
 * One POST to a provider through the deployment's pool, with the attempt's deadlines and abort signal.
 * Resolves with the 2xx response; any other status becomes the adapter's typed error (the body is read
 * only up to a bound), and transport failures become typed errors too.
 */
export async function postUpstream(
  target: UpstreamTarget,
  path: string,
  headers: Record<string, string>,
  body: string,
  toError: HttpErrorMapper,
): Promise<Dispatcher.ResponseData> {
  let response: Dispatcher.ResponseData;
  try {
    response = await target.dispatcher.request({
      origin: target.baseUrl.origin,
      path,
      method: 'POST',
      headers: target.traceHeaders ? { ...headers, ...target.traceHeaders } : headers,
      body,
      signal: target.signal,
      headersTimeout: target.headersTimeoutMs,
      bodyTimeout: target.idleTimeoutMs,
    });
  } catch (error) {
    throw transportError(error, target.signal);
  }
  if (response.statusCode >= 200 && response.statusCode < 300) return response;
  const text = await readBounded(response.body).catch(() => '');
  throw toError(response.statusCode, response.headers, text);
}

/**
 * A buffered answer's JSON, read up to `maxBytes`: a longer body is refused as `answer_too_large` (its
 * connection let go at once, never more than the bound held), one that is not JSON is a malformed
 * response — unless we aborted, which is the abort's error.
 */
export async function readJsonBody(body: Dispatcher.ResponseData['body'], signal: AbortSignal, maxBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size > maxBytes) {
        body.destroy();
        throw new ProviderError('answer_too_large', `the provider's answer exceeded ${maxBytes} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    if (error instanceof ProviderError) throw error;
    throw transportError(error, signal);
  }
  try {
    return JSON.parse((chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)).toString('utf8'));
  } catch {
    throw new ProviderError('malformed_response', 'the provider returned a body that is not JSON');
  }
}

/** `prefix` (the base URL's path) + `path`, without a doubled slash. */
export function joinPath(prefix: string, path: string): string {
  return `${prefix.replace(/\/+$/, '')}${path}`;
}
