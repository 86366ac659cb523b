import type { RetrySettings } from './resilience-settings.js';

/**
 * Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"): the
 * wait before retry number `retry` (0 = the first retry) is drawn uniformly from
 * [0, min(max, base × 2^retry)). Full jitter spreads the retries of many callers who failed together,
 * so a provider recovering from an outage is not hit by a synchronised wave.
 */
export function fullJitterBackoff(retry: number, settings: Pick<RetrySettings, 'baseBackoffMs' | 'maxBackoffMs'>, random: () => number = Math.random): number {
  const ceiling = Math.min(settings.maxBackoffMs, settings.baseBackoffMs * 2 ** Math.max(0, retry));
  return Math.floor(random() * ceiling);
}

/**
 * How long to wait before calling the same deployment again: the provider's retry-after when it sent
 * one (it knows when it will take traffic again), otherwise full-jitter backoff.
 */
export function retryWaitMs(
  retryAfterMs: number | null,
  retry: number,
  settings: Pick<RetrySettings, 'baseBackoffMs' | 'maxBackoffMs'>,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== null && retryAfterMs >= 0) return retryAfterMs;
  return fullJitterBackoff(retry, settings, random);
}

/** Resolves after `ms`, or at once (false) when `signal` aborts first. Never rejects. */
export function waitFor(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
