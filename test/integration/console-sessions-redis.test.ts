import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { ConsoleSessions } from '../../modules/console/console-sessions.js';
import type { ConsoleStateStore } from '../../modules/console/console-state-store.js';
import { MemoryConsoleStateStore } from '../../modules/console/memory-console-state-store.js';
import { RedisConsoleStateStore } from '../../modules/console/redis-console-state-store.js';
import { SignInThrottle } from '../../modules/console/sign-in-throttle.js';
import { ConsoleBrowser } from '../support/console-browser.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { createScratchDatabase, requireService } from '../support/services.js';

const databaseUrl = requireService('DATABASE_URL');
const redisUrl = requireService('REDIS_URL');
const describeWithRedis = redisUrl ? describe : describe.skip;
const describeWithServices = databaseUrl && redisUrl ? describe : describe.skip;

const IDLE_MS = 30 * 60_000;
const MAX_AGE_MS = 12 * 3_600_000;

/** A clock the test moves; the stores' own expiry still runs on real time, so the sessions' checks are what is tested. */
class TestClock {
  constructor(public ms = Date.parse('2026-12-06T12:00:00Z')) {}
  readonly now = () => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

const redis = redisUrl ? new Redis(redisUrl) : null;
const namespace = `console-test-${randomBytes(4).toString('hex')}`;

afterAll(async () => {
  if (!redis) return;
  const keys = await redis.keys(`${namespace}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

const stores: Array<[string, (clock: TestClock) => ConsoleStateStore]> = [
  ['memory', (clock) => new MemoryConsoleStateStore(clock.now)],
  ...(redis ? [['redis', () => new RedisConsoleStateStore(redis, namespace)] as [string, (clock: TestClock) => ConsoleStateStore]] : []),
];

describe.each(stores)('console sessions in %s: timeouts on the session\'s own clock', (_name, makeStore) => {
  test('idle: a session unused for the idle timeout is gone (and stays gone); used just before, it lives on', async () => {
    const clock = new TestClock();
    const sessions = new ConsoleSessions(makeStore(clock), { idleTimeoutMs: IDLE_MS, maxAgeMs: MAX_AGE_MS }, clock.now);
    const used = await sessions.open('alice', 'operator', 'oidc');
    const unused = await sessions.open('bob', 'viewer', 'oidc');
    clock.advance(IDLE_MS - 1);
    expect((await sessions.find(used.cookieValue))?.user).toBe('alice');
    clock.advance(1);
    expect(await sessions.find(unused.cookieValue)).toBeNull();
    expect(await sessions.find(unused.cookieValue)).toBeNull();
    // Alice's use moved her idle deadline.
    clock.advance(IDLE_MS - 2);
    const alice = await sessions.find(used.cookieValue);
    expect(alice).toMatchObject({ user: 'alice', role: 'operator', method: 'oidc' });
    expect(alice!.idleExpiresAt.getTime()).toBe(clock.ms + IDLE_MS);
  });

  test('absolute: however often it is used, a session ends at its maximum age; the idle deadline never passes it', async () => {
    const clock = new TestClock();
    const sessions = new ConsoleSessions(makeStore(clock), { idleTimeoutMs: IDLE_MS, maxAgeMs: MAX_AGE_MS }, clock.now);
    const opened = await sessions.open('carol', 'finance', 'oidc');
    const end = clock.ms + MAX_AGE_MS;
    expect(opened.session.expiresAt.getTime()).toBe(end);
    while (clock.ms + IDLE_MS / 2 < end) {
      clock.advance(IDLE_MS / 2);
      const found = await sessions.find(opened.cookieValue);
      expect(found).not.toBeNull();
      expect(found!.idleExpiresAt.getTime()).toBeLessThanOrEqual(end);
    }
    clock.ms = end;
    expect(await sessions.find(opened.cookieValue)).toBeNull();
  });

  test('sign-out ends the session at once; another cookie value opens nothing', async () => {
    const clock = new TestClock();
    const sessions = new ConsoleSessions(makeStore(clock), { idleTimeoutMs: IDLE_MS, maxAgeMs: MAX_AGE_MS }, clock.now);
    const opened = await sessions.open('dave', 'auditor', 'token');
    expect(await sessions.find(opened.cookieValue.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')))).toBeNull();
    await sessions.close(opened.cookieValue);
    expect(await sessions.find(opened.cookieValue)).toBeNull();
  });

  test('the sign-in throttle counts per address in one window', async () => {
    const clock = new TestClock();
    const throttle = new SignInThrottle(makeStore(clock), 3);
    const address = `192.0.2.${Math.floor(Math.random() * 250)}-${randomBytes(2).toString('hex')}`;
    for (let i = 0; i < 3; i++) await throttle.admit(address);
    await expect(throttle.admit(address)).rejects.toMatchObject({ status: 429, code: 'sign_in_rate_limited' });
    await throttle.admit(`${address}-other`);
  });
});

describeWithRedis('console sessions in Redis: what the store holds', () => {
  test('the key is the hash of the cookie value, never the value; Redis expires it by the nearer deadline', async () => {
    const store = new RedisConsoleStateStore(redis!, namespace);
    const sessions = new ConsoleSessions(store, { idleTimeoutMs: 60_000, maxAgeMs: 3_600_000 });
    const opened = await sessions.open('erin', 'admin', 'token');
    const keys = await redis!.keys(`${namespace}:console:session:*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key).not.toContain(opened.cookieValue);
      expect(await redis!.get(key)).not.toContain(opened.cookieValue);
    }
    let mine: string | undefined;
    for (const key of keys) if ((await redis!.get(key))?.includes('"erin"')) mine = key;
    const ttl = await redis!.pttl(mine!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
  });
});

describe('console sessions when Redis cannot be reached', () => {
  test('every use is 503 session_store_unavailable: no session is taken for valid, none is opened', async () => {
    // Nothing listens on port 1; no offline queue, so each command fails at once.
    const unreachable = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
    unreachable.on('error', () => undefined);
    try {
      const sessions = new ConsoleSessions(new RedisConsoleStateStore(unreachable, namespace), { idleTimeoutMs: IDLE_MS, maxAgeMs: MAX_AGE_MS });
      await expect(sessions.find('A'.repeat(43))).rejects.toMatchObject({ status: 503, code: 'session_store_unavailable' });
      await expect(sessions.open('frank', 'admin', 'token')).rejects.toMatchObject({ status: 503, code: 'session_store_unavailable' });
      await expect(new SignInThrottle(new RedisConsoleStateStore(unreachable, namespace), 3).admit('192.0.2.1')).rejects.toMatchObject({ status: 503 });
    } finally {
      unreachable.disconnect();
    }
  });
});

/** Two gateway nodes on one database and one Redis: a console session opened on one works on the other, and signing out on either ends it on both. */
describeWithServices('console sessions across two nodes (Redis)', () => {
  const ADMIN_TOKEN = 'console-two-nodes-admin-token-0123456789';
  let scratch: { url: string; drop: () => Promise<void> };
  let nodeA: TestGateway;
  let nodeB: TestGateway;
  const browsers: ConsoleBrowser[] = [];

  beforeAll(async () => {
    scratch = await createScratchDatabase(databaseUrl!);
    const environment = (nodeId: string) => ({ redisUrl, nodeId, adminToken: ADMIN_TOKEN, cache: { exactCacheEnabled: false, namespace } });
    nodeA = await startTestGateway({ databaseUrl: scratch.url, environment: environment('node-a') });
    // Node B applies A's configuration (the same key secret), which changes nothing.
    const config = readFileSync(nodeA.configPath, 'utf8');
    nodeB = await startTestGateway({ databaseUrl: scratch.url, yaml: () => config, environment: environment('node-b') });
  }, 60_000);

  afterAll(async () => {
    for (const each of browsers) await each.close();
    await nodeA?.close();
    await nodeB?.close();
    await scratch?.drop();
  });

  test('signed in on A, the same cookie and CSRF token work on B; signed out on B, A refuses it', async () => {
    const onA = new ConsoleBrowser(nodeA.url);
    browsers.push(onA);
    expect((await onA.signInWithToken(ADMIN_TOKEN)).status).toBe(200);
    const onB = new ConsoleBrowser(nodeB.url);
    browsers.push(onB);
    onB.cookies.set('switchyard_console', onA.cookies.get('switchyard_console')!);
    onB.csrfToken = onA.csrfToken;
    expect((await onB.get('/admin/v1/status')).status).toBe(200);
    expect((await onB.change('DELETE', '/console/api/session')).status).toBe(204);
    const after = await onA.get('/admin/v1/status');
    expect(after.status).toBe(401);
    expect(after.json.error.code).toBe('session_required');
  });
});
