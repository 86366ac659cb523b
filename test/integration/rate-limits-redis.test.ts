import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../modules/canonical/gateway-error.js';
import type { RateScope } from '../../modules/limits/rate-limit/rate-limit-scopes.js';
import { LimitsRedis } from '../../modules/limits/limits-redis.js';
import { RateLimiter } from '../../modules/limits/rate-limit/rate-limiter.js';
import { OwnRedis, redisServerAvailable } from '../support/own-redis.js';
import { requireService } from '../support/services.js';
import { testPort } from '../support/port-range.js';

const redisUrl = requireService('REDIS_URL');
const describeWithRedis = redisUrl ? describe : describe.skip;
const describeWithOwnRedis = redisServerAvailable() ? describe : describe.skip;

const one = { requests: 1, inputTokens: 20, outputTokens: 80 };
const admitted = (p: Promise<unknown>) => p.then(() => true, (error: unknown) => {
  if (error instanceof GatewayError && error.status === 429) return false;
  throw error;
});

async function waitUntil(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describeWithRedis('rate limits shared through Redis', () => {
  const redisA = new LimitsRedis(redisUrl, 'node-a');
  const redisB = new LimitsRedis(redisUrl, 'node-b');
  const nodeA = new RateLimiter(redisA);
  const nodeB = new RateLimiter(redisB);
  beforeAll(() => Promise.all([redisA.start(), redisB.start()]));
  afterAll(() => Promise.all([redisA.close(), redisB.close()]));

  test('two nodes racing for one key admit exactly its limit, requests and tokens alike', async () => {
    const id = `race-${randomBytes(4).toString('hex')}`;
    const scopes: RateScope[] = [{ kind: 'key', id, limits: { rpm: 120, tpm: 9_000 } }];
    const outcomes = await Promise.all(Array.from({ length: 300 }, (_, i) => admitted((i % 2 ? nodeA : nodeB).reserve(scopes, one))));
    // 9,000 tokens / 100 per request = 90 < 120 requests: the token counter is the one that binds.
    expect(outcomes.filter(Boolean)).toHaveLength(90);
    expect(redisA.status()).toEqual({ backend: 'redis', degraded: false, degradedSince: null });
  });

  test('settlement on one node frees tokens for the other', async () => {
    const id = `settle-${randomBytes(4).toString('hex')}`;
    const scopes: RateScope[] = [{ kind: 'tenant', id, limits: { rpm: null, tpm: 200 } }];
    const first = await nodeA.reserve(scopes, one);
    await nodeB.reserve(scopes, one);
    expect(await admitted(nodeB.reserve(scopes, one))).toBe(false);
    // The first request failed before any output: it used nothing, and its 100 tokens come back.
    first.settle({ requests: 1, inputTokens: 0, outputTokens: 0 });
    await new Promise((resolve) => setTimeout(resolve, 50)); // the correction is sent in the background
    const third = await nodeB.reserve(scopes, one);
    expect(third.headers['x-ratelimit-remaining-tokens']).toBe('0');
  });
});

describeWithRedis('SWITCHYARD_REDIS_NAMESPACE: installations sharing one Redis share no counter', () => {
  const namespace = `sy-ns-${randomBytes(4).toString('hex')}`;
  const plain = new LimitsRedis(redisUrl, 'plain-node');
  const other = new LimitsRedis(redisUrl, 'other-node', Date.now, namespace);
  const sameAsOther = new LimitsRedis(redisUrl, 'other-node-2', Date.now, namespace);
  beforeAll(() => Promise.all([plain.start(), other.start(), sameAsOther.start()]));
  afterAll(() => Promise.all([plain.close(), other.close(), sameAsOther.close()]));

  test('a key of the same id in another namespace has its own limit; nodes of one namespace share theirs', async () => {
    const scopes: RateScope[] = [{ kind: 'key', id: 'shared-name', limits: { rpm: 1, tpm: null } }];
    const id = `ns-${randomBytes(4).toString('hex')}`;
    const named: RateScope[] = scopes.map((scope) => ({ ...scope, id }));
    await new RateLimiter(plain).reserve(named, one);
    expect(await admitted(new RateLimiter(plain).reserve(named, one))).toBe(false);
    // The other installation's key of the same id: its first request is its own.
    await new RateLimiter(other).reserve(named, one);
    // …and its second node counts with it.
    expect(await admitted(new RateLimiter(sameAsOther).reserve(named, one))).toBe(false);
    expect(plain.keyTag).toBe('{switchyard}:');
    expect(other.keyTag).toBe(`{${namespace}}:`);
  });
});

describeWithRedis('a 429\'s headers from the Redis script: the same instant as in process (issue 34)', () => {
  const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
  const shared = new LimitsRedis(redisUrl, 'headers-node');
  beforeAll(() => shared.start());
  afterAll(() => shared.close());

  test('a slot settled down to zero is no usage; retry-after, retry-after-ms and reset-requests agree, and equal the local store\'s', async () => {
    const id = `zero-${randomBytes(4).toString('hex')}`;
    const scopes: RateScope[] = [{ kind: 'key', id, limits: { rpm: 2, tpm: null } }];
    const run = async (limiter: RateLimiter, clock: { now: number }) => {
      clock.now = T0;
      const cancelled = await limiter.reserve(scopes, one);
      cancelled.cancel(); // T0's slot now holds 0 requests
      await new Promise((resolve) => setTimeout(resolve, 50)); // the correction is sent in the background
      clock.now = T0 + 6_000;
      const second = await limiter.reserve(scopes, one);
      clock.now = T0 + 7_000;
      await limiter.reserve(scopes, one);
      clock.now = T0 + 13_250;
      const error = await limiter.reserve(scopes, one).then(() => null, (e: unknown) => e as GatewayError);
      return { second: second.headers, error: error! };
    };
    const sharedClock = { now: T0 };
    const viaRedis = await run(new RateLimiter(shared, () => sharedClock.now), sharedClock);
    expect(shared.status().backend).toBe('redis');
    expect(viaRedis.second['x-ratelimit-reset-requests']).toBe('1m0s');
    expect(viaRedis.error.headers).toMatchObject({
      'retry-after': '53', 'retry-after-ms': '52750', 'x-ratelimit-reset-requests': '52.8s', 'x-ratelimit-remaining-requests': '0',
    });
    const localClock = { now: T0 };
    const inProcess = await run(new RateLimiter(new LimitsRedis(null, 'local-node'), () => localClock.now), localClock);
    expect(inProcess.second).toEqual(viaRedis.second);
    expect(inProcess.error.headers).toEqual(viaRedis.error.headers);
  });
});

describeWithRedis('across scopes, the Redis script refuses by the scope that frees up last, as in process (issue 34)', () => {
  const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
  const shared = new LimitsRedis(redisUrl, 'scopes-node');
  beforeAll(() => shared.start());
  afterAll(() => shared.close());

  test('key rpm and tenant tpm both full: retry-after is the tenant\'s, reset-tokens the same instant, reset-requests the key counter\'s own', async () => {
    const id = randomBytes(4).toString('hex');
    const tenant: RateScope = { kind: 'tenant', id: `t-${id}`, limits: { rpm: null, tpm: 1000 } };
    const app = [{ kind: 'key', id: `app-${id}`, limits: { rpm: 2, tpm: null } } as RateScope, tenant];
    const run = async (limiter: RateLimiter, clock: { now: number }) => {
      clock.now = T0 + 1_000;
      await limiter.reserve(app, { requests: 1, inputTokens: 5, outputTokens: 5 });
      clock.now = T0 + 2_000;
      await limiter.reserve(app, { requests: 1, inputTokens: 5, outputTokens: 5 });
      clock.now = T0 + 20_000;
      await limiter.reserve([{ kind: 'key', id: `other-${id}`, limits: { rpm: 10, tpm: null } }, tenant], { requests: 1, inputTokens: 480, outputTokens: 500 });
      clock.now = T0 + 30_000;
      return limiter.reserve(app, { requests: 1, inputTokens: 50, outputTokens: 50 }).then(() => null, (e: unknown) => e as GatewayError);
    };
    const sharedClock = { now: T0 };
    const viaRedis = (await run(new RateLimiter(shared, () => sharedClock.now), sharedClock))!;
    expect(shared.status().backend).toBe('redis');
    expect(viaRedis.detail).toMatchObject({ scope: `tenant:t-${id}`, limit_type: 'tokens', setting: `tenants[t-${id}].limits.tpm` });
    expect(viaRedis.headers).toMatchObject({
      'retry-after': '50', 'retry-after-ms': '50000', 'x-ratelimit-reset-tokens': '50s', 'x-ratelimit-reset-requests': '31s',
    });
    const localClock = { now: T0 };
    const inProcess = (await run(new RateLimiter(new LimitsRedis(null, 'local-scopes'), () => localClock.now), localClock))!;
    expect(inProcess.headers).toEqual(viaRedis.headers);
    expect(inProcess.message).toBe(viaRedis.message);
  });
});

describeWithOwnRedis('rate limits while Redis is away', () => {
  const redis = new OwnRedis(testPort(1101));
  let redisA: LimitsRedis;
  let redisB: LimitsRedis;
  let nodeA: RateLimiter;
  let nodeB: RateLimiter;
  beforeAll(async () => {
    await redis.start();
    redisA = new LimitsRedis(redis.url, 'node-a');
    redisB = new LimitsRedis(redis.url, 'node-b');
    await Promise.all([redisA.start(), redisB.start()]);
    nodeA = new RateLimiter(redisA);
    nodeB = new RateLimiter(redisB);
  });
  afterAll(async () => {
    await redisA?.close();
    await redisB?.close();
    await redis.stop();
  });

  test('Redis stopped mid-run: each node keeps serving within the limit on its own; shared again when it returns', async () => {
    const scopes = (id: string): RateScope[] => [{ kind: 'key', id, limits: { rpm: 10, tpm: null } }];
    const burst = async (id: string) => {
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => admitted((i % 2 ? nodeA : nodeB).reserve(scopes(id), one))));
      return results.filter(Boolean).length;
    };
    expect(await burst('before')).toBe(10);

    await redis.stop();
    // Served, not failed: each node applies the limit by itself (so at most twice it across two nodes).
    const during = await burst('during');
    expect(during).toBe(20);
    for (const node of [redisA, redisB]) {
      expect(node.status()).toMatchObject({ backend: 'local', degraded: true });
      expect(node.status().degradedSince).not.toBeNull();
    }

    await redis.start();
    await waitUntil(() => !redisA.status().degraded && !redisB.status().degraded, 10_000, 'both nodes use Redis again');
    expect(redisA.status().backend).toBe('redis');
    expect(await burst('after')).toBe(10);
  });
});
