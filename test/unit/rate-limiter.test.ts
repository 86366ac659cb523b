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
    expect([error.status, error.code, error.detail]).toEqual([429, 'rate_limited', { scope: 'key:app', limit_type: 'requests', setting: 'apiKeys[app].limits.rpm' }]);
    // The first request was admitted at T0: its slot leaves the window at T0 + 60 s, 45 s from now.
    expect(error.headers['retry-after']).toBe('45');
    expect(error.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(error.message).toContain("API key 'app': 2 requests per minute (apiKeys[app].limits.rpm)");
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
    expect((await refusal(limits.reserve(scopes, { requests: 1, inputTokens: 100, outputTokens: 100 }))).detail).toEqual({ scope: 'key:app', limit_type: 'output_tokens', setting: 'apiKeys[app].limits.outputTpm' });
  });

  test('a refusal in one scope charges no other scope; cancel gives everything back', async () => {
    const clock = { now: T0 };
    const limits = limiter(clock);
    const tenant: RateScope = { kind: 'tenant', id: 'acme', limits: { rpm: 1, tpm: null } };
    await limits.reserve([key({ rpm: 5, tpm: null }, 'a'), tenant], one);
    const error = await refusal(limits.reserve([key({ rpm: 5, tpm: null }, 'b'), tenant], one));
    expect(error.detail).toEqual({ scope: 'tenant:acme', limit_type: 'requests', setting: 'tenants[acme].limits.rpm' });
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
    expect(error.detail).toEqual({ scope: 'key:app', limit_type: 'tokens', setting: 'apiKeys[app].limits.tpm' });
    // No wait makes it fit: no retry-after to wait for (an SDK would otherwise sleep on it, twice).
    expect(error.headers['retry-after']).toBeUndefined();
    expect(error.headers['retry-after-ms']).toBeUndefined();
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

  test('durations are written like OpenAI writes them, rounded up: never earlier than the moment they count to', () => {
    expect([duration(250), duration(1000), duration(45_000), duration(61_500)]).toEqual(['250ms', '1s', '45s', '1m1.5s']);
    expect([duration(249.2), duration(999.5), duration(53_040), duration(59_999), duration(60_000), duration(0)]).toEqual(['250ms', '1s', '53.1s', '1m0s', '1m0s', '0ms']);
  });
});

/** Seconds in `x-ratelimit-reset-*` ("53.1s", "1m0.5s", "250ms"). */
function resetSeconds(value: string): number {
  const match = /^(?:(\d+)m)?(?:([\d.]+)s|(\d+)ms)$/.exec(value);
  if (!match) throw new Error(`not a duration: ${value}`);
  return Number(match[1] ?? 0) * 60 + (match[3] !== undefined ? Number(match[3]) / 1000 : Number(match[2]));
}

/** retry-after is the refusing counter's reset rounded up to the second, and retry-after-ms the same instant. */
function expectAgreement(error: GatewayError, family: 'requests' | 'tokens'): void {
  const reset = resetSeconds(error.headers[`x-ratelimit-reset-${family}`]);
  expect(Number(error.headers['retry-after'])).toBe(Math.max(1, Math.ceil(reset)));
  expect(Math.ceil(Number(error.headers['retry-after-ms']) / 100) / 10).toBe(reset >= 1 ? reset : Math.ceil(reset * 10) / 10);
}

describe('a 429\'s retry-after and x-ratelimit-reset-* count to one instant (issue 34)', () => {
  test('the refusing counter: retry-after-ms, retry-after and reset-requests from the same moment, each rounded up', async () => {
    const clock = { now: T0 };
    const limits = limiter(clock);
    const scopes = [key({ rpm: 2, tpm: null })];
    await limits.reserve(scopes, one);
    clock.now = T0 + 10_000;
    await limits.reserve(scopes, one);
    clock.now = T0 + 15_260;
    const error = await refusal(limits.reserve(scopes, one));
    // The first request's slot leaves the window at T0 + 60 s: 44.74 s from now.
    expect(error.headers).toMatchObject({
      'retry-after': '45', 'retry-after-ms': '44740', 'x-ratelimit-reset-requests': '44.8s', 'x-ratelimit-remaining-requests': '0',
    });
    expect(error.message).toContain('Retry in 44.8s.');
    expectAgreement(error, 'requests');
  });

  test('a slot settled down to zero (a request refused later in admission) is no usage: reset does not point at it', async () => {
    const clock = { now: T0 };
    const limits = limiter(clock);
    const scopes = [key({ rpm: 2, tpm: null })];
    const cancelled = await limits.reserve(scopes, one);
    cancelled.cancel(); // its slot (T0) now holds 0 requests
    clock.now = T0 + 6_000;
    const second = await limits.reserve(scopes, one);
    // Capacity next returns when this request's slot leaves, not T0's empty one.
    expect(second.headers['x-ratelimit-reset-requests']).toBe('1m0s');
    clock.now = T0 + 7_000;
    await limits.reserve(scopes, one);
    clock.now = T0 + 13_000;
    const error = await refusal(limits.reserve(scopes, one));
    // Before: reset-requests said 47s (T0's empty slot) next to retry-after 53.
    expect(error.headers).toMatchObject({ 'retry-after': '53', 'x-ratelimit-reset-requests': '53s' });
    expectAgreement(error, 'requests');
  });

  test('refused on output tokens: the tokens headers are the output counter\'s, not the looser total', async () => {
    const clock = { now: T0 };
    const limits = limiter(clock);
    const scopes = [key({ rpm: null, tpm: 10_000, outputTpm: 500 })];
    await limits.reserve(scopes, { requests: 1, inputTokens: 100, outputTokens: 400 });
    clock.now = T0 + 20_500;
    const error = await refusal(limits.reserve(scopes, { requests: 1, inputTokens: 100, outputTokens: 400 }));
    expect(error.detail).toEqual({ scope: 'key:app', limit_type: 'output_tokens', setting: 'apiKeys[app].limits.outputTpm' });
    expect(error.headers).toMatchObject({
      'x-ratelimit-limit-tokens': '500', 'x-ratelimit-remaining-tokens': '100', 'x-ratelimit-reset-tokens': '39.5s', 'retry-after': '40',
    });
    expectAgreement(error, 'tokens');
  });

  test('refused on the tenant while the key has room: the requests headers are the tenant\'s', async () => {
    const clock = { now: T0 };
    const limits = limiter(clock);
    const tenant: RateScope = { kind: 'tenant', id: 'acme', limits: { rpm: 1, tpm: null } };
    await limits.reserve([key({ rpm: 5, tpm: null }, 'a'), tenant], one);
    clock.now = T0 + 30_000;
    const error = await refusal(limits.reserve([key({ rpm: 5, tpm: null }, 'b'), tenant], one));
    expect(error.headers).toMatchObject({
      'x-ratelimit-limit-requests': '1', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '30s', 'retry-after': '30',
    });
    expectAgreement(error, 'requests');
  });
});

/**
 * Several scopes at once (key rpm, tenant tpm): retry-after is when the request fits every scope again —
 * the refused scope that frees up last — and its header family shows that counter with the same instant;
 * the other family shows its own counter's reset.
 */
describe('retry-after and x-ratelimit-reset-* across scopes (issue 34)', () => {
  const tenant = (tpm: number): RateScope => ({ kind: 'tenant', id: 'acme', limits: { rpm: null, tpm } });
  const small = { requests: 1, inputTokens: 5, outputTokens: 5 };

  test('refused by the key\'s rpm only: reset-requests equals retry-after; reset-tokens is the tenant counter\'s own', async () => {
    const clock = { now: T0 };
    const limits = limiter(clock);
    // Another key of the tenant used tokens first: the tenant's oldest usage is at T0.
    await limits.reserve([key({ rpm: 10, tpm: null }, 'other'), tenant(1000)], { requests: 1, inputTokens: 100, outputTokens: 100 });
    const app = [key({ rpm: 2, tpm: null }), tenant(1000)];
    clock.now = T0 + 5_000;
    await limits.reserve(app, small);
    clock.now = T0 + 10_000;
    await limits.reserve(app, small);
    clock.now = T0 + 15_260;
    const error = await refusal(limits.reserve(app, small));
    expect(error.detail).toMatchObject({ scope: 'key:app', limit_type: 'requests', setting: 'apiKeys[app].limits.rpm' });
    expect(error.headers).toMatchObject({
      'retry-after': '50', 'retry-after-ms': '49740', 'x-ratelimit-reset-requests': '49.8s',
      // The tenant's tokens counter frees its oldest usage (T0's) at T0 + 60 s.
      'x-ratelimit-reset-tokens': '44.8s', 'x-ratelimit-remaining-tokens': '780', 'x-ratelimit-limit-tokens': '1000',
    });
    expectAgreement(error, 'requests');
  });

  test('refused by the key\'s rpm and the tenant\'s tpm: retry-after is the later of the two, the tenant\'s, never an instant still refused', async () => {
    const clock = { now: T0 };
    const limits = limiter(clock);
    const app = [key({ rpm: 2, tpm: null }), tenant(1000)];
    clock.now = T0 + 1_000;
    await limits.reserve(app, small);
    clock.now = T0 + 2_000;
    await limits.reserve(app, small);
    clock.now = T0 + 20_000;
    await limits.reserve([key({ rpm: 10, tpm: null }, 'other'), tenant(1000)], { requests: 1, inputTokens: 480, outputTokens: 500 });
    clock.now = T0 + 30_000;
    // Key rpm fits again at T0 + 61 s, the tenant's 1,000 tokens only at T0 + 80 s (T0 + 20 s's usage must go).
    const error = await refusal(limits.reserve(app, { requests: 1, inputTokens: 50, outputTokens: 50 }));
    expect(error.detail).toMatchObject({ scope: 'tenant:acme', limit_type: 'tokens', setting: 'tenants[acme].limits.tpm' });
    expect(error.message).toBe("Rate limit reached for tenant 'acme': 1000 tokens per minute (tenants[acme].limits.tpm). Retry in 50s.");
    expect(error.headers).toMatchObject({
      'retry-after': '50', 'retry-after-ms': '50000', 'x-ratelimit-reset-tokens': '50s', 'x-ratelimit-remaining-tokens': '0',
      // The key's rpm counter: its own oldest request leaves the window at T0 + 61 s.
      'x-ratelimit-reset-requests': '31s', 'x-ratelimit-remaining-requests': '0',
    });
    expectAgreement(error, 'tokens');
    // At T0 + 61 s the key has room but the tenant does not yet: still refused, by the tenant.
    clock.now = T0 + 61_000;
    expect((await refusal(limits.reserve(app, { requests: 1, inputTokens: 50, outputTokens: 50 }))).detail).toMatchObject({ scope: 'tenant:acme' });
    clock.now = T0 + 80_000;
    await limits.reserve(app, { requests: 1, inputTokens: 50, outputTokens: 50 });
  });
});
