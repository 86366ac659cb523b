import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { PlaceholderKeys, SessionTokenVault, recoverText } from '../../modules/content-safety/index.js';
import { requireService } from '../support/services.js';

/** Session-scoped placeholders on a real Redis: shared by nodes, encrypted, expiring, never crossing sessions or tenants. */
const redisUrl = requireService('REDIS_URL');
const suite = redisUrl ? describe : describe.skip;

suite('session token vault (Redis)', () => {
  let redis: Redis;
  let otherNode: Redis;
  const namespace = `sy-test-pii-${randomBytes(6).toString('hex')}`;
  const keys = PlaceholderKeys.from({ piiKey: () => 'an-operator-key-of-at-least-32-characters' });
  const vault = (tenant: string, session: string, client: Redis = redis, ttl = 60, space = namespace) =>
    new SessionTokenVault(client, keys, tenant, session, ttl, space);

  beforeAll(() => {
    redis = new Redis(redisUrl!, { maxRetriesPerRequest: 1 });
    otherNode = new Redis(redisUrl!, { maxRetriesPerRequest: 1 });
  });

  afterAll(async () => {
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `${namespace}:*`, 'COUNT', 500);
      cursor = next;
      if (found.length > 0) await redis.del(...found);
    } while (cursor !== '0');
    await redis.quit();
    await otherNode.quit();
  });

  test('a later turn on another node recovers the placeholders the session made; the value is stored encrypted, under no tenant or session name', async () => {
    const first = vault('acme', 's1');
    const placeholder = first.tokenize('email', 'ann@example.com');
    await first.persist();
    const stored = await redis.keys(`${namespace}:*`);
    expect(stored).toHaveLength(1);
    expect(stored[0]).not.toMatch(/acme|s1/);
    const entry = (await redis.get(stored[0]))!;
    expect(entry).not.toContain('ann@example.com');
    expect(Buffer.from(entry.split('.')[2], 'base64').toString('latin1')).not.toContain('ann@');
    expect(await redis.ttl(stored[0])).toBeGreaterThan(50);

    const later = vault('acme', 's1', otherNode);
    const history = `Earlier you wrote to ${placeholder}.`;
    await later.loadReferenced([history]);
    expect(recoverText(`Reply to ${placeholder}`, later).text).toBe('Reply to ann@example.com');
    // The same value in the same session gets the same placeholder, on any node.
    expect(later.tokenize('email', 'ann@example.com')).toBe(placeholder);
  });

  test('another session, another tenant, a forged or altered placeholder: nothing is looked up, nothing recovered', async () => {
    const owner = vault('acme', 's2');
    const placeholder = owner.tokenize('phone', '+44 20 7946 0958');
    await owner.persist();
    const altered = placeholder.replace(/_([A-Z2-7])([A-Z2-7]{9})\]$/, (_, c: string, rest: string) => `_${c === 'A' ? 'B' : 'A'}${rest}]`);
    for (const other of [vault('acme', 's3'), vault('globex', 's2')]) {
      await other.loadReferenced([placeholder]);
      expect(other.size).toBe(0);
      expect(recoverText(placeholder, other)).toEqual({ text: placeholder, resolved: 0, unresolved: 1 });
    }
    const same = vault('acme', 's2');
    await same.loadReferenced([altered]);
    expect(same.size).toBe(0);
    expect(recoverText(altered, same).unresolved).toBe(1);
  });

  test('an entry written under another key, or tampered with, does not decrypt: the placeholder stays unresolved', async () => {
    const space = `${namespace}:tamper`;
    const owner = vault('acme', 's4', redis, 60, space);
    const placeholder = owner.tokenize('email', 'zed@example.com');
    await owner.persist();
    const otherKey = new SessionTokenVault(redis, PlaceholderKeys.from({ piiKey: () => 'another-operator-key-of-32-characters' }), 'acme', 's4', 60, space);
    await otherKey.loadReferenced([placeholder]);
    expect(otherKey.size).toBe(0);
    const entries = await redis.keys(`${space}:*`);
    expect(entries).toHaveLength(1);
    for (const key of entries) {
      const entry = (await redis.get(key))!;
      const [version, keyId, body] = entry.split('.');
      const sealed = Buffer.from(body, 'base64');
      sealed[sealed.length - 20] ^= 1;
      await redis.set(key, `${version}.${keyId}.${sealed.toString('base64')}`, 'KEEPTTL');
    }
    const reader = vault('acme', 's4', redis, 60, space);
    await reader.loadReferenced([placeholder]);
    expect(reader.resolve(placeholder)).toBeUndefined();
  });

  test('entries expire with the session TTL; a turn that uses one refreshes it', async () => {
    const space = `${namespace}:ttl`;
    const owner = vault('acme', 's5', redis, 1, space);
    const expiring = owner.tokenize('email', 'old@example.com');
    await owner.persist();
    const kept = vault('acme', 's5', redis, 3, space);
    const placeholder = kept.tokenize('email', 'kept@example.com');
    await kept.persist();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const reader = vault('acme', 's5', redis, 30, space);
    await reader.loadReferenced([`${expiring} ${placeholder}`]);
    expect(reader.resolve(expiring)).toBeUndefined();
    expect(reader.resolve(placeholder)).toBe('kept@example.com');
    await reader.persist();
    const left = await redis.keys(`${space}:*`);
    expect(left).toHaveLength(1);
    expect(await redis.ttl(left[0])).toBeGreaterThan(20);
  });
});
