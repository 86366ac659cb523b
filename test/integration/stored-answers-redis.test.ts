import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisExactCache } from '../../modules/cache/redis-exact-cache.js';
import { RedisIdempotencyStore } from '../../modules/cache/redis-idempotency-store.js';
import type { StoredAnswer } from '../../modules/cache/stored-answer.js';
import { requireService } from '../support/services.js';

/** The Redis stores on a real Redis: ownership is checked in the same step as every write, entries expire there. */
const redisUrl = requireService('REDIS_URL');
const suite = redisUrl ? describe : describe.skip;

const answer = (text: string): StoredAnswer => ({
  requestId: 'r1', created: 1, response: { providerRequestId: null, choices: [{ index: 0, text, toolCalls: [], stopReason: 'stop', reasoning: [], logprobs: null }], usage: null },
  usage: { input: 1, cachedInput: 0, cacheWrite: 0, output: 1, reasoning: 0 },
  source: { deploymentId: 'd', providerId: 'p', model: 'm', priceVersion: 1, costUsd: '0.001' },
});

suite('stored answers in Redis', () => {
  let redis: Redis;
  const namespace = `sy-test-stores-${randomBytes(6).toString('hex')}`;

  beforeAll(() => {
    redis = new Redis(redisUrl!, { maxRetriesPerRequest: 1 });
  });

  afterAll(async () => {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${namespace}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
    await redis.quit();
  });

  test('idempotency: one owner however many claim at once; only the owner renews, settles or abandons', async () => {
    const store = new RedisIdempotencyStore(redis, namespace, 100_000);
    const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => store.claim('race', 'f', `o${i}`, 5_000)));
    expect(claims.filter((c) => c.kind === 'owner')).toHaveLength(1);
    expect(claims.filter((c) => c.kind === 'pending')).toHaveLength(19);
    const owner = `o${claims.findIndex((c) => c.kind === 'owner')}`;
    expect(await store.claim('race', 'other body', 'x', 5_000)).toEqual({ kind: 'mismatch' });

    await store.settle('race', 'not-the-owner', answer('forged'), 60_000);
    await store.abandon('race', 'not-the-owner');
    expect(await store.claim('race', 'f', 'y', 5_000)).toEqual({ kind: 'pending' });

    await store.renew('race', owner, 60_000);
    expect(await redis.pttl(`${namespace}:idempotency:race`)).toBeGreaterThan(5_000);
    await store.settle('race', owner, answer('the outcome'), 60_000);
    expect(await store.claim('race', 'f', 'z', 5_000)).toMatchObject({ kind: 'completed', answer: { response: { choices: [{ text: 'the outcome' }] } } });
    await store.abandon('race', owner); // a settled outcome is not the owner's to drop any more
    expect((await store.claim('race', 'f', 'z', 5_000)).kind).toBe('completed');
  });

  test('idempotency: a lease that runs out lets a retry run; an outcome too large is not kept', async () => {
    const store = new RedisIdempotencyStore(redis, namespace, 1_000);
    expect((await store.claim('lease', 'f', 'crashed', 50)).kind).toBe('owner');
    await new Promise((r) => setTimeout(r, 80));
    expect((await store.claim('lease', 'f', 'next', 5_000)).kind).toBe('owner');
    await store.settle('lease', 'next', answer('x'.repeat(2_000)), 60_000);
    expect((await store.claim('lease', 'f', 'third', 5_000)).kind).toBe('owner');
  });

  test('exact cache: entries expire, and a purge selects by tenant, alias and age without touching others', async () => {
    const cache = new RedisExactCache(redis, namespace, 100_000);
    // A TTL a loaded machine cannot outrun between the put and the first get (50 ms once could).
    await cache.put({ tenantId: 'acme', alias: 'chat', digest: 'ttl' }, answer('short'), 1_000);
    expect(await cache.get({ tenantId: 'acme', alias: 'chat', digest: 'ttl' })).not.toBeNull();
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await cache.get({ tenantId: 'acme', alias: 'chat', digest: 'ttl' })).toBeNull();

    // Ids with glob characters cannot widen a purge: they are hex-encoded into the key.
    for (const tenantId of ['acme', 'acme*', 'globex']) {
      for (const alias of ['chat', 'other']) await cache.put({ tenantId, alias, digest: 'd' }, answer(`${tenantId}/${alias}`), 60_000);
    }
    expect(await cache.purge({ tenantId: 'acme*', alias: null, storedBefore: null })).toBe(2);
    expect(await cache.get({ tenantId: 'acme', alias: 'chat', digest: 'd' })).not.toBeNull();
    expect(await cache.purge({ tenantId: null, alias: 'other', storedBefore: Date.now() - 60_000 })).toBe(0);
    expect(await cache.purge({ tenantId: null, alias: 'other', storedBefore: Date.now() + 1 })).toBe(2);
    expect(await cache.get({ tenantId: 'globex', alias: 'chat', digest: 'd' })).toMatchObject({ response: { choices: [{ text: 'globex/chat' }] } });
    await cache.put({ tenantId: 'acme', alias: 'chat', digest: 'big' }, answer('y'.repeat(200_000)), 60_000);
    expect(await cache.get({ tenantId: 'acme', alias: 'chat', digest: 'big' })).toBeNull();
  });
});
