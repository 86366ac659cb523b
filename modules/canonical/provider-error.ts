import { firstHeader } from './headers.js';

/** Typed classes every provider adapter maps its failures into; routing decides on these alone. */
export const ERROR_CLASSES = [
  'transient', 'rate_limited', 'auth', 'invalid_request', 'content_policy', 'context_length', 'overloaded', 'timeout',
  'connection', 'malformed_response', 'answer_too_large', 'cancelled', 'unknown',
] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

export interface ProviderErrorDetail {
  /** The provider's own id for the failed call (from its response headers or stream), when it sent one. */
  providerRequestId?: string | null;
  /** What the provider said about the failure, already redacted and capped; null when it said nothing usable. */
  providerMessage?: string | null;
}

/**
 * A failed upstream call. `message` is the gateway's own wording and never carries provider text;
 * what the provider said travels apart, redacted, in `providerMessage`, and a client sees it only for
 * errors the client can fix (modules/inference/pipeline/provider-error-disclosure.ts).
 */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly providerRequestId: string | null;
  readonly providerMessage: string | null;
  constructor(
    readonly errorClass: ErrorClass,
    message: string,
    readonly httpStatus: number | null = null,
    /** From retry-after / retry-after-ms, in ms. */
    readonly retryAfterMs: number | null = null,
    detail: ProviderErrorDetail = {},
  ) {
    super(message);
    this.providerRequestId = detail.providerRequestId ?? null;
    this.providerMessage = detail.providerMessage ?? null;
  }

  /** Worth trying the same or another deployment (before any output reached the client). */
  get fallbackable(): boolean {
    return ['transient', 'rate_limited', 'overloaded', 'timeout', 'connection', 'malformed_response', 'answer_too_large', 'unknown'].includes(this.errorClass);
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
