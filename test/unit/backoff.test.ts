import { fullJitterBackoff, retryWaitMs, waitFor } from '../../modules/inference/resilience/backoff.js';
import { DEFAULT_RESILIENCE } from '../../modules/inference/resilience/resilience-settings.js';
import { type FailureContext, afterFailure } from '../../modules/inference/resilience/retry-policy.js';
import { seededRandom } from '../support/seeded-random.js';

const retry = DEFAULT_RESILIENCE.retry; // base 100 ms, max 2 s, 3 attempts


describe('full-jitter exponential backoff', () => {
  test('the ceiling doubles per retry and stops at the maximum', () => {
    const top = () => 0.999_999;
    expect([0, 1, 2, 3, 4, 5, 10].map((r) => fullJitterBackoff(r, retry, top))).toEqual([99, 199, 399, 799, 1599, 1999, 1999]);
    expect(fullJitterBackoff(3, retry, () => 0)).toBe(0);
  });

  test('waits are spread uniformly over [0, ceiling): no synchronised retry wave', () => {
    const random = seededRandom(42);
    const waits = Array.from({ length: 10_000 }, () => fullJitterBackoff(2, retry, random));
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...waits)).toBeLessThan(400);
    const mean = waits.reduce((sum, w) => sum + w, 0) / waits.length;
    expect(mean).toBeGreaterThan(190);
    expect(mean).toBeLessThan(210);
    // Each quarter of the range holds about a quarter of the waits.
    for (let q = 0; q < 4; q++) {
      const share = waits.filter((w) => w >= q * 100 && w < (q + 1) * 100).length / waits.length;
      expect(share).toBeGreaterThan(0.22);
      expect(share).toBeLessThan(0.28);
    }
  });

  test('a provider\'s retry-after (already parsed from retry-after or retry-after-ms) wins over the backoff', () => {
    expect(retryWaitMs(1_500, 0, retry, () => 0.5)).toBe(1_500);
    expect(retryWaitMs(0, 4, retry, () => 0.5)).toBe(0);
    expect(retryWaitMs(null, 1, retry, () => 0.5)).toBe(100);
  });

  test('waitFor resolves true after the wait, false at once when aborted', async () => {
    const controller = new AbortController();
    const waiting = waitFor(60_000, controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBe(false);
    await expect(waitFor(5, new AbortController().signal)).resolves.toBe(true);
    await expect(waitFor(5, controller.signal)).resolves.toBe(false);
  });
});

describe('retry and fallback rules', () => {
  const base: FailureContext = {
    errorClass: 'transient', retryAfterMs: null, attemptsMade: 1, maxAttempts: 3, retriesOfThisDeployment: 0,
    deploymentsTried: 1, alternativesLeft: true, remainingMs: 100_000,
  };
  const next = (overrides: Partial<FailureContext>) => afterFailure({ ...base, ...overrides }, retry, () => 0.5);

  test.each(['auth', 'invalid_request', 'content_policy', 'context_length', 'cancelled'] as const)('%s is never retried, nor sent elsewhere', (errorClass) => {
    expect(next({ errorClass }).kind).toBe('stop');
    expect(next({ errorClass, alternativesLeft: false }).kind).toBe('stop');
  });

  test.each(['transient', 'timeout', 'connection', 'malformed_response', 'unknown'] as const)('%s falls back while another route is left', (errorClass) => {
    expect(next({ errorClass })).toMatchObject({ kind: 'fall-back' });
  });

  test('transient on the only route is retried there with backoff, up to the attempt budget', () => {
    expect(next({ alternativesLeft: false })).toMatchObject({ kind: 'retry-same', waitMs: 50 });
    expect(next({ alternativesLeft: false, attemptsMade: 2, retriesOfThisDeployment: 1 })).toMatchObject({ kind: 'retry-same', waitMs: 100 });
    expect(next({ alternativesLeft: false, attemptsMade: 3, retriesOfThisDeployment: 2 })).toMatchObject({ kind: 'stop', why: 'attempt budget of 3 spent' });
  });

  test('once every route failed, no route is called a second time', () => {
    expect(next({ alternativesLeft: false, deploymentsTried: 2, attemptsMade: 2 })).toMatchObject({ kind: 'stop' });
  });

  test('overloaded falls back at once and is never retried on the same route', () => {
    expect(next({ errorClass: 'overloaded', retryAfterMs: 10 })).toMatchObject({ kind: 'fall-back' });
    expect(next({ errorClass: 'overloaded', alternativesLeft: false })).toMatchObject({ kind: 'stop' });
  });

  test('rate_limited: the same route once, after its short retry-after; then fall back', () => {
    expect(next({ errorClass: 'rate_limited', retryAfterMs: 800 })).toMatchObject({ kind: 'retry-same', waitMs: 800 });
    expect(next({ errorClass: 'rate_limited' })).toMatchObject({ kind: 'retry-same', waitMs: 50 });
    expect(next({ errorClass: 'rate_limited', retriesOfThisDeployment: 1, attemptsMade: 2 })).toMatchObject({ kind: 'fall-back' });
  });

  test('rate_limited with a long retry-after falls back at once instead of waiting', () => {
    expect(next({ errorClass: 'rate_limited', retryAfterMs: 30_000 })).toMatchObject({ kind: 'fall-back' });
    expect(next({ errorClass: 'rate_limited', retryAfterMs: 30_000, alternativesLeft: false })).toMatchObject({ kind: 'stop' });
  });

  test('no wait may cross the request deadline, and no attempt starts after it', () => {
    expect(next({ errorClass: 'rate_limited', retryAfterMs: 1_000, remainingMs: 900, alternativesLeft: false })).toMatchObject({ kind: 'stop' });
    expect(next({ alternativesLeft: false, remainingMs: 40 })).toMatchObject({ kind: 'stop' });
    expect(next({ remainingMs: 0 })).toMatchObject({ kind: 'stop', why: 'request deadline passed' });
  });

  test('a 429 storm costs at most the attempt budget per request', () => {
    // Two routes, both always rate limited: walk the rules the way the pipeline does.
    const routes = ['a', 'b'];
    const calls: string[] = [];
    let index = 0;
    const retries = new Map<string, number>();
    for (;;) {
      calls.push(routes[index]);
      const step = afterFailure(
        {
          ...base, errorClass: 'rate_limited', retryAfterMs: null, attemptsMade: calls.length,
          retriesOfThisDeployment: retries.get(routes[index]) ?? 0, deploymentsTried: index + 1, alternativesLeft: index + 1 < routes.length,
        },
        retry,
        () => 0.5,
      );
      if (step.kind === 'stop') break;
      if (step.kind === 'retry-same') retries.set(routes[index], (retries.get(routes[index]) ?? 0) + 1);
      else index++;
    }
    expect(calls).toEqual(['a', 'a', 'b']);
  });
});
