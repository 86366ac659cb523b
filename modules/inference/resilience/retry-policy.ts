import type { ErrorClass } from '../../canonical/index.js';
import { retryWaitMs } from './backoff.js';
import type { RetrySettings } from './resilience-settings.js';

/** What to do after a failed attempt that sent nothing to the client yet. */
export type NextStep =
  | { kind: 'retry-same'; waitMs: number; why: string }
  | { kind: 'fall-back'; why: string }
  | { kind: 'stop'; why: string };

/** The request's situation when an attempt failed. */
export interface FailureContext {
  errorClass: ErrorClass;
  retryAfterMs: number | null;
  /** Upstream calls made so far in this request, the failed one included. */
  attemptsMade: number;
  /** The request's attempt budget. */
  maxAttempts: number;
  /** Retries already spent on the deployment that just failed. */
  retriesOfThisDeployment: number;
  /** Distinct deployments called so far in this request. */
  deploymentsTried: number;
  /** Whether untried candidates remain in the plan. */
  alternativesLeft: boolean;
  /** Time left before the request deadline. */
  remainingMs: number;
}

/** Failures that say something about the request, not the provider: another attempt would fail the same way. */
const NEVER_RETRIED: ReadonlySet<ErrorClass> = new Set(['auth', 'invalid_request', 'content_policy', 'context_length', 'cancelled']);

/** Failures a second call of the same deployment may get past (a blip, a dropped connection). */
const TRANSIENT: ReadonlySet<ErrorClass> = new Set(['transient', 'timeout', 'connection', 'malformed_response', 'unknown']);

/**
 * The retry and fallback rules (issue 5 §3), as one pure function of the failure and the request's
 * situation:
 * - never again for auth, invalid_request, content_policy, context_length or a cancellation;
 * - never past the attempt budget or the request deadline;
 * - overloaded: fall back at once;
 * - rate_limited: the same deployment at most once, and only when its retry-after (or the backoff) is
 *   short, then fall back;
 * - transient and timeout: fall back when another deployment is left; when the plan offered this one
 *   deployment only, retry it with full-jitter backoff. Failing over is faster than waiting, and
 *   circling back to a deployment that already failed after its alternatives also failed only
 *   lengthens an outage the caller should hear about.
 */
export function afterFailure(failure: FailureContext, settings: RetrySettings, random: () => number = Math.random): NextStep {
  if (NEVER_RETRIED.has(failure.errorClass)) return { kind: 'stop', why: `${failure.errorClass} is not retried` };
  if (failure.attemptsMade >= failure.maxAttempts) return { kind: 'stop', why: `attempt budget of ${failure.maxAttempts} spent` };
  if (failure.remainingMs <= 0) return { kind: 'stop', why: 'request deadline passed' };
  const fallBack = (why: string): NextStep => (failure.alternativesLeft ? { kind: 'fall-back', why } : { kind: 'stop', why: `${why}; no route left` });

  if (failure.errorClass === 'overloaded') return fallBack('overloaded: fall back at once');
  if (failure.errorClass === 'rate_limited') {
    if (failure.retriesOfThisDeployment > 0) return fallBack('rate limited again');
    const waitMs = retryWaitMs(failure.retryAfterMs, 0, settings, random);
    if (waitMs > settings.maxRetryAfterWaitMs) return fallBack(`rate limited for ${waitMs} ms`);
    if (waitMs >= failure.remainingMs) return fallBack('rate limited past the request deadline');
    return { kind: 'retry-same', waitMs, why: failure.retryAfterMs !== null ? `rate limited: retry once after retry-after ${waitMs} ms` : `rate limited: retry once after ${waitMs} ms backoff` };
  }
  if (TRANSIENT.has(failure.errorClass)) {
    if (failure.alternativesLeft) return { kind: 'fall-back', why: `${failure.errorClass}: fall back` };
    if (failure.deploymentsTried > 1) return { kind: 'stop', why: `${failure.errorClass}: every route failed` };
    const waitMs = retryWaitMs(failure.retryAfterMs, failure.retriesOfThisDeployment, settings, random);
    if (waitMs > Math.max(settings.maxRetryAfterWaitMs, settings.maxBackoffMs)) return { kind: 'stop', why: `${failure.errorClass}: retry-after ${waitMs} ms is too long to wait` };
    if (waitMs >= failure.remainingMs) return { kind: 'stop', why: 'backoff would pass the request deadline' };
    return { kind: 'retry-same', waitMs, why: `${failure.errorClass}: retry ${failure.retriesOfThisDeployment + 1} after ${waitMs} ms backoff` };
  }
  return fallBack(`${failure.errorClass}`);
}
