import { readEnvironment } from '../../src/config/environment.js';
import { endpoint, startupBanner } from '../../src/startup-banner.js';

/**
 * Issue 34 item 6: the start-up banner says which stores, caches and limits are in force, each with the
 * variable that changes it, and never a credential of the URLs it describes.
 */
describe('the start-up banner', () => {
  const SECRETS = ['pg-pass-4417', 'redis-pass-9981', 'ch-pass-2290', 'ssl-secret-77', 'admin-token-from-env-0123456789'];

  test('the laptop default: embedded PGlite, everything in process, the demo configuration, each with how to change it', () => {
    const lines = startupBanner(readEnvironment({ SWITCHYARD_DATA_DIR: '/var/lib/sy' }), 'generated_now');
    expect(lines).toEqual([
      'event store: embedded PGlite at /var/lib/sy (DATABASE_URL=postgres://… for PostgreSQL)',
      'outage spool: none: the embedded store lives in this process, so there is no database outage to ride out',
      'durability: default (SWITCHYARD_DURABILITY=default|strict|async)',
      'rate limits, budgets, concurrency: in this process, this node only (REDIS_URL=redis://… to share them across nodes)',
      'exact cache: on, in this process up to 64 MiB (SWITCHYARD_CACHE_MAX_BYTES), entries kept 3600 s (SWITCHYARD_CACHE_TTL_SECONDS; SWITCHYARD_CACHE=off to turn off)',
      'idempotency keys: in this process, outcomes kept 600 s (SWITCHYARD_IDEMPOTENCY_RETENTION_SECONDS)',
      "analytics: from the event store's PGlite tables (CLICKHOUSE_URL=http://…:8123 for ClickHouse)",
      'node admission: 1024 concurrent requests, 512 streams, no queue (SWITCHYARD_MAX_CONCURRENT_REQUESTS, SWITCHYARD_MAX_CONCURRENT_STREAMS, SWITCHYARD_ADMISSION_QUEUE_DEPTH)',
      'request log: on, one JSON line per request on stdout (SWITCHYARD_REQUEST_LOG=off to turn off)',
      expect.stringMatching(/^configuration: (the built-in demo \(SWITCHYARD_CONFIG=FILE, or \.\/switchyard\.yaml\)|.+switchyard\.yaml \(SWITCHYARD_CONFIG\))$/),
      'admin token: generated now, printed below once and stored hashed (set ADMIN_TOKEN to choose your own)',
    ]);
  });

  test('a production node: PostgreSQL, Redis and ClickHouse by host, port and database, and no credential anywhere', () => {
    const env = {
      DATABASE_URL: 'postgres://switchyard:pg-pass-4417@db.internal:5433/gateway?sslmode=require&sslpassword=ssl-secret-77',
      REDIS_URL: 'redis://:redis-pass-9981@cache.internal:6380/2',
      CLICKHOUSE_URL: 'http://analyst:ch-pass-2290@olap.internal:8123',
      ADMIN_TOKEN: 'admin-token-from-env-0123456789',
      SWITCHYARD_CACHE: 'off',
      SWITCHYARD_DURABILITY: 'strict',
      SWITCHYARD_SPOOL_MAX_BYTES: '0',
      SWITCHYARD_PROJECTOR: 'external',
      SWITCHYARD_MAX_CONCURRENT_STREAMS: '0',
      SWITCHYARD_IDEMPOTENCY_RETENTION_SECONDS: '120',
      SWITCHYARD_REQUEST_LOG: 'off',
      SWITCHYARD_CONFIG: '/etc/switchyard/switchyard.yaml',
    };
    const lines = startupBanner(readEnvironment(env), 'environment');
    expect(lines).toEqual([
      'event store: PostgreSQL db.internal:5433/gateway (DATABASE_URL)',
      'projections (ledger, spend, audit chain): in a separate `switchyard projector` (SWITCHYARD_PROJECTOR)',
      'outage spool: off, requests fail while PostgreSQL is down (SWITCHYARD_SPOOL_MAX_BYTES above 0 to turn on)',
      'durability: strict (SWITCHYARD_DURABILITY=default|strict|async)',
      'rate limits, budgets, concurrency: in Redis cache.internal:6380/2, shared by every node (REDIS_URL)',
      'exact cache: off (SWITCHYARD_CACHE=on to turn on)',
      'idempotency keys: in Redis cache.internal:6380/2, outcomes kept 120 s (SWITCHYARD_IDEMPOTENCY_RETENTION_SECONDS)',
      'analytics: ClickHouse olap.internal:8123/switchyard (CLICKHOUSE_URL)',
      'node admission: 1024 concurrent requests, unlimited streams, no queue (SWITCHYARD_MAX_CONCURRENT_REQUESTS, SWITCHYARD_MAX_CONCURRENT_STREAMS, SWITCHYARD_ADMISSION_QUEUE_DEPTH)',
      'request log: off (SWITCHYARD_REQUEST_LOG=on to turn on)',
      'configuration: /etc/switchyard/switchyard.yaml (SWITCHYARD_CONFIG)',
      'admin token: from ADMIN_TOKEN',
    ]);
    const text = lines.join('\n');
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/switchyard:|analyst|sslmode|@/);
  });

  test('PostgreSQL with the spool on and the projections in process; a token from an earlier start', () => {
    const lines = startupBanner(readEnvironment({ DATABASE_URL: 'postgresql://u:pg-pass-4417@10.0.0.5/ledger', SWITCHYARD_SPOOL_DIR: '/srv/spool' }), 'stored');
    expect(lines).toContain('projections (ledger, spend, audit chain): in this process (SWITCHYARD_PROJECTOR=external to run them in `switchyard projector`)');
    expect(lines).toContain('outage spool: on, up to 256 MiB at /srv/spool (SWITCHYARD_SPOOL_MAX_BYTES=0 to turn off)');
    expect(lines).toContain("analytics: from the event store's PostgreSQL tables (CLICKHOUSE_URL=http://…:8123 for ClickHouse)");
    expect(lines.at(-1)).toBe('admin token: generated on an earlier start, stored hashed (`switchyard admin-token reset` to replace it, or set ADMIN_TOKEN)');
    expect(lines.join('\n')).not.toContain('pg-pass-4417');
  });

  test('an endpoint is host, port and database only; a URL that does not parse is not echoed', () => {
    expect(endpoint('redis://default:redis-pass-9981@r:6379')).toBe('r:6379');
    expect(endpoint('postgres://a:b@h/d%20b?password=x')).toBe('h/d b');
    expect(endpoint('not a url with pg-pass-4417')).toBe('(URL not shown: it does not parse)');
  });
});
