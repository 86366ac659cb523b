import { ADMIN_ENVIRONMENT } from '../modules/admin/admin-settings.js';
import { CACHE_ENVIRONMENT, resolveCacheSettings } from '../modules/cache/cache-settings.js';
import { DURABILITY_ENVIRONMENT } from '../modules/inference/pipeline/durability.js';
import { ADMISSION_ENVIRONMENT, resolveAdmission } from '../modules/limits/admission-settings.js';
import { OBSERVABILITY_ENVIRONMENT, resolveObservability } from '../modules/observability/observability-settings.js';
import type { Environment } from './config/environment.js';
import { SERVING_ENVIRONMENT } from './config/environment-settings.js';
import { EVENT_STORE_ENVIRONMENT } from './kernel/event-store/event-store-settings.js';
import { SPOOL_ENVIRONMENT, defaultSpoolSettings } from './kernel/event-store/spool/spool-settings.js';

/** Where the admin token a server accepts comes from. */
export type AdminTokenSource = 'environment' | 'generated_now' | 'stored';

const { DATABASE_URL } = EVENT_STORE_ENVIRONMENT;
const { REDIS_URL, CLICKHOUSE_URL, SWITCHYARD_CONFIG, SWITCHYARD_PROJECTOR } = SERVING_ENVIRONMENT;
const { SWITCHYARD_CACHE, SWITCHYARD_CACHE_TTL_SECONDS, SWITCHYARD_CACHE_MAX_BYTES, SWITCHYARD_IDEMPOTENCY_RETENTION_SECONDS } = CACHE_ENVIRONMENT;
const { SWITCHYARD_SPOOL_MAX_BYTES } = SPOOL_ENVIRONMENT;
const { SWITCHYARD_MAX_CONCURRENT_REQUESTS, SWITCHYARD_MAX_CONCURRENT_STREAMS, SWITCHYARD_ADMISSION_QUEUE_DEPTH } = ADMISSION_ENVIRONMENT;

/**
 * What a starting server tells its operator about itself, one line per store, cache or limit in force,
 * each with the variable that changes it (named through its declaration in the settings registry, so a
 * renamed variable cannot be misnamed here). Built from the resolved environment only: a URL shows its
 * host, port and database, never its user, password or query (which may carry credentials), and no
 * secret is ever read here.
 */
export function startupBanner(environment: Environment, adminToken: AdminTokenSource): string[] {
  const cache = resolveCacheSettings(environment.cache, environment.redisUrl, environment.nodeId);
  const admission = resolveAdmission(environment.admission);
  const requestLog = resolveObservability(environment.observability).settings.requestLog;
  const spool = environment.spool ?? defaultSpoolSettings(environment.dataDir);
  const shared = environment.redisUrl ? `in Redis ${endpoint(environment.redisUrl)}` : 'in this process';
  const lines = [
    environment.databaseUrl
      ? `event store: PostgreSQL ${endpoint(environment.databaseUrl)} (${DATABASE_URL.name})`
      : `event store: embedded PGlite at ${environment.dataDir} (${DATABASE_URL.name}=postgres://… for PostgreSQL)`,
  ];
  if (environment.databaseUrl) {
    lines.push((environment.projector ?? 'embedded') === 'embedded'
      ? `projections (ledger, spend, audit chain): in this process (${SWITCHYARD_PROJECTOR.name}=external to run them in \`switchyard projector\`)`
      : `projections (ledger, spend, audit chain): in a separate \`switchyard projector\` (${SWITCHYARD_PROJECTOR.name})`);
    lines.push(spool.maxBytes > 0
      ? `outage spool: on, up to ${mebibytes(spool.maxBytes)} at ${spool.directory} (${SWITCHYARD_SPOOL_MAX_BYTES.name}=0 to turn off)`
      : `outage spool: off, requests fail while PostgreSQL is down (${SWITCHYARD_SPOOL_MAX_BYTES.name} above 0 to turn on)`);
  }
  else lines.push('outage spool: none: the embedded store lives in this process, so there is no database outage to ride out');
  lines.push(
    `durability: ${environment.durability} (${DURABILITY_ENVIRONMENT.SWITCHYARD_DURABILITY.name}=default|strict|async)`,
    environment.redisUrl
      ? `rate limits, budgets, concurrency: in Redis ${endpoint(environment.redisUrl)}, shared by every node (${REDIS_URL.name})`
      : `rate limits, budgets, concurrency: in this process, this node only (${REDIS_URL.name}=redis://… to share them across nodes)`,
    cache.exactCacheEnabled
      ? `exact cache: on, ${shared}${environment.redisUrl ? '' : ` up to ${mebibytes(cache.exactCacheMaxBytes)} (${SWITCHYARD_CACHE_MAX_BYTES.name})`}, entries kept ${cache.exactCacheTtlMs / 1000} s (${SWITCHYARD_CACHE_TTL_SECONDS.name}; ${SWITCHYARD_CACHE.name}=off to turn off)`
      : `exact cache: off (${SWITCHYARD_CACHE.name}=on to turn on)`,
    `idempotency keys: ${shared}, outcomes kept ${cache.idempotencyRetentionMs / 1000} s (${SWITCHYARD_IDEMPOTENCY_RETENTION_SECONDS.name})`,
    environment.clickhouseUrl
      ? `analytics: ClickHouse ${endpoint(environment.clickhouseUrl, 'switchyard')} (${CLICKHOUSE_URL.name})`
      : `analytics: from the event store's ${environment.databaseUrl ? 'PostgreSQL' : 'PGlite'} tables (${CLICKHOUSE_URL.name}=http://…:8123 for ClickHouse)`,
    `node admission: ${limit(admission.maxConcurrentRequests)} concurrent requests, ${limit(admission.maxConcurrentStreams)} streams, ` +
      `${admission.queueDepth > 0 ? `a queue of ${admission.queueDepth}` : 'no queue'} (${SWITCHYARD_MAX_CONCURRENT_REQUESTS.name}, ${SWITCHYARD_MAX_CONCURRENT_STREAMS.name}, ${SWITCHYARD_ADMISSION_QUEUE_DEPTH.name})`,
    `request log: ${requestLog ? `on, one JSON line per request on stdout (${OBSERVABILITY_ENVIRONMENT.SWITCHYARD_REQUEST_LOG.name}=off to turn off)` : `off (${OBSERVABILITY_ENVIRONMENT.SWITCHYARD_REQUEST_LOG.name}=on to turn on)`}`,
    environment.configPath
      ? `configuration: ${environment.configPath} (${SWITCHYARD_CONFIG.name})`
      : `configuration: the built-in demo (${SWITCHYARD_CONFIG.name}=FILE, or ./switchyard.yaml)`,
    `admin token: ${ADMIN_TOKEN_SOURCES[adminToken]}`,
  );
  return lines;
}

const ADMIN_TOKEN_SOURCES: Readonly<Record<AdminTokenSource, string>> = Object.freeze({
  environment: `from ${ADMIN_ENVIRONMENT.ADMIN_TOKEN.name}`,
  generated_now: `generated now, printed below once and stored hashed (set ${ADMIN_ENVIRONMENT.ADMIN_TOKEN.name} to choose your own)`,
  stored: `generated on an earlier start, stored hashed (\`switchyard admin-token reset\` to replace it, or set ${ADMIN_ENVIRONMENT.ADMIN_TOKEN.name})`,
});

/**
 * `host:port/database` of a service URL: what tells an operator which server is used, without the
 * user, the password or the query string (sslpassword and friends), which are never printed.
 */
export function endpoint(url: string, defaultDatabase?: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(URL not shown: it does not parse)';
  }
  const path = parsed.pathname.replace(/^\/+/, '').replace(/\/+$/, '');
  const database = path || defaultDatabase;
  return `${parsed.host}${database ? `/${decodeURIComponent(database)}` : ''}`;
}

const mebibytes = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MiB` : `${bytes} bytes`);
const limit = (value: number | null) => (value === null || value === 0 ? 'unlimited' : String(value));
