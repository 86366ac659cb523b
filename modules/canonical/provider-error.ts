import { firstHeader } from './headers.js';

/** Typed classes every provider adapter maps its failures into; routing decides on these alone. */
export const ERROR_CLASSES = [
  'transient', 'rate_limited', 'auth', 'invalid_request', 'content_policy', 'context_length', 'overloaded', 'timeout',
  'connection', 'malformed_response', 'cancelled', 'unknown',
] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

/**
 * A failed upstream call. `message` is already sanitised: no provider keys, base URLs or raw bodies
 * reach a client or a log through it.
 */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  constructor(
    readonly errorClass: ErrorClass,
    message: string,
    readonly httpStatus: number | null = null,
    /** From retry-after / retry-after-ms, in ms. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }

  /** Worth trying the same or another deployment (before any output reached the client). */
  get fallbackable(): boolean {
    return ['transient', 'rate_limited', 'overloaded', 'timeout', 'connection', 'malformed_response', 'unknown'].includes(this.errorClass);
  }
}

/** Parses `retry-after` (seconds or HTTP date) and `retry-after-ms` into milliseconds. */
export function retryAfterMs(headers: Record<string, string | string[] | undefined>, now = Date.now()): number | null {
  const ms = firstHeader(headers['retry-after-ms']);
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const value = firstHeader(headers['retry-after']);
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
