import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { LocalWindowStore } from '../../modules/limits/rate-limit/local-window-store.js';
import { duration } from '../../modules/limits/rate-limit/rate-limit-headers.js';
import type { RateScope } from '../../modules/limits/rate-limit/rate-limit-scopes.js';
import { RateLimiter } from '../../modules/limits/rate-limit/rate-limiter.js';
import { LimitsRedis } from '../../modules/limits/limits-redis.js';

const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);

function limiter(clock: { now: number }) {
  return new RateLimiter(new LimitsRedis(null, 'test-node'), () => clock.now);
}

const key = (limits: RateScope['limits'], id = 'app'): RateScope => ({ kind: 'key', id, limits });
const one = { requests: 1, inputTokens: 10, outputTokens: 100 };

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe('RateLimiter (in process)', () => {
  test('rpm: the limit within the minute, then 429 naming the scope with retry-after until the oldest request leaves the window', async () => {
    const clock = { now: T0 };
    const limits = limiter(clock);
    const scopes = [key({ rpm: 2, tpm: null })];
    const first = await limits.reserve(scopes, one);
    expect(first.headers).toEqual({ 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '1', 'x-ratelimit-reset-requests': '1m0s' });
    clock.now += 10_000;
    expect((await limits.reserve(scopes, one)).headers['x-ratelimit-remaining-requests']).toBe('0');
    clock.now += 5_000;
    const error = await refusal(limits.reserve(scopes, one));
    expect([error.status, error.code, error.detail]).toEqual([429, 'rate_limited', { scope: 'key:app', limit_type: 'requests' }]);
    // The first request was admitted at T0: its slot leaves the window at T0 + 60 s, 45 s from now.
    expect(error.headers['retry-after']).toBe('45');
    expect(error.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(error.message).toContain("API key 'app': 2 requests per minute");
    clock.now = T0 + 60_000;
    await limits.reserve(scopes, one);
    await refusal(limits.reserve(scopes, one));
  });

  test('token limits reserve the estimate and settlement gives back what was not used', async () => {
    const clock = { now: T0 };
    const limits = limiter(clock);
    const scopes = [key({ rpm: null, tpm: 1000, outputTpm: 500 })];
    const big = { requests: 1, inputTokens: 100, outputTokens: 400 };
    const first = await limits.reserve(scopes, big);
    expect(first.headers['x-ratelimit-remaining-tokens']).toBe('500');
    // Output tokens are the tighter counter now: 100 left of 500.
    await refusal(limits.reserve(scopes, big));
    first.settle({ requests: 1, inputTokens: 100, outputTokens: 50 });
    const second = await limits.reserve(scopes, big);
    expect(second.headers['x-ratelimit-remaining-tokens']).toBe('350');
    // Settling twice changes nothing.
    first.settle({ requests: 1, inputTokens: 0, outputTokens: 0 });
    expect((await refusal(limits.reserve(scopes, { requests: 1, inputTokens: 100, outputTokens: 100 }))).detail).toEqual({ scope: 'key:app', limit_type: 'output_tokens' });
  });

  test('a refusal in one scope charges no other scope; cancel gives everything back', async () => {
    const clock = { now: T0 };
    const limits = limiter(clock);
    const tenant: RateScope = { kind: 'tenant', id: 'acme', limits: { rpm: 1, tpm: null } };
    await limits.reserve([key({ rpm: 5, tpm: null }, 'a'), tenant], one);
    const error = await refusal(limits.reserve([key({ rpm: 5, tpm: null }, 'b'), tenant], one));
    expect(error.detail).toEqual({ scope: 'tenant:acme', limit_type: 'requests' });
    // Key b was not charged by the refused request: it still has all 5.
    const b = await limits.reserve([key({ rpm: 5, tpm: null }, 'b')], one);
    expect(b.headers['x-ratelimit-remaining-requests']).toBe('4');
    b.cancel();
    expect((await limits.reserve([key({ rpm: 5, tpm: null }, 'b')], one)).headers['x-ratelimit-remaining-requests']).toBe('4');
  });

  test('a request larger than a limit is refused outright, saying why', async () => {
    const limits = limiter({ now: T0 });
    const error = await refusal(limits.reserve([key({ rpm: null, tpm: 10 })], one));
    expect(error.message).toContain('needs 110 tokens, more than the 10 per minute');
    expect(error.detail).toEqual({ scope: 'key:app', limit_type: 'tokens' });
  });

  test('no limits: nothing is counted and no headers are added', async () => {
    const limits = limiter({ now: T0 });
    expect((await limits.reserve([key({ rpm: null, tpm: null })], one)).headers).toEqual({});
  });

  test('the window never admits more than the limit in any 60 s, whatever the arrival pattern', async () => {
    const store = new LocalWindowStore();
    const admittedAt: number[] = [];
    let now = T0;
    for (let i = 0; i < 3000; i++) {
      now += (i * 7919) % 97; // irregular gaps, bursts included
      const decision = store.chargeNow([{ key: 'k', limit: 50, cost: 1 }], now);
      if (decision.admitted) admittedAt.push(now);
    }
    for (let i = 0; i < admittedAt.length; i++) {
      const inWindow = admittedAt.filter((t) => t >= admittedAt[i] && t < admittedAt[i] + 59_000).length;
      expect(inWindow).toBeLessThanOrEqual(50);
    }
    expect(admittedAt.length).toBeGreaterThan(50);
  });

  test('durations are written like OpenAI writes them', () => {
    expect([duration(250), duration(1000), duration(45_000), duration(61_500)]).toEqual(['250ms', '1s', '45s', '1m1.5s']);
  });
});
