import { existsSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import { resolve } from 'node:path';
import { DEFAULT_HTTP_SETTINGS, type HttpSettings } from '../../modules/inference/http/http-settings.js';
import { DURABILITY_PROFILES, type DurabilityProfile } from '../../modules/inference/pipeline/durability.js';
import type { ResilienceOverrides } from '../../modules/inference/resilience/resilience-settings.js';
import type { AdmissionSettings } from '../../modules/limits/admission-settings.js';
import type { ObservabilityOverrides } from '../../modules/observability/observability-settings.js';
import type { AuditSettings } from '../../projections/audit-chain/audit-settings.js';
import { type SecretReferencePolicy, SecretPolicyError, secretReferencePolicy } from '../kernel/secret-references/secret-reference-policy.js';

/** Everything configured through environment variables (DESIGN §8). */
export interface Environment {
  port: number;
  host: string;
  /** YAML applied at start; null = the built-in demo. */
  configPath: string | null;
  /** PGlite's directory; `:memory:` keeps everything in memory (tests). */
  dataDir: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  clickhouseUrl: string | null;
  adminToken: string | null;
  durability: DurabilityProfile;
  pollIntervalMs: number;
  /**
   * Wake projections by LISTEN/NOTIFY (default). Off (`SWITCHYARD_LISTEN=off`) behind connection poolers
   * that do not support LISTEN, such as PgBouncer in transaction mode: polling alone then keeps nodes current.
   */
  listen?: boolean;
  nodeId: string;
  logLevel: 'error' | 'warn' | 'log' | 'debug';
  /** Deadlines, retries and breaker thresholds that differ from the defaults (resilience-settings.ts). */
  resilience?: ResilienceOverrides;
  /** Node-wide admission limits that differ from the defaults (admission-settings.ts). */
  admission?: Partial<AdmissionSettings>;
  /** HTTP worker processes of this node (node:cluster); more than one needs PostgreSQL. */
  workers?: number;
  /**
   * Where the durable projections (ledger, spend) run: `embedded` in the serving process (the default),
   * or `external` in a `switchyard projector` process of their own, so they never cost the serving path.
   */
  projector?: 'embedded' | 'external';
  /** Audit checkpoint signing; absent = read from SWITCHYARD_AUDIT_* when the platform opens (audit-settings.ts). */
  audit?: AuditSettings;
  /**
   * What `env:` and `file:` references may read (SWITCHYARD_SECRET_ENV, SWITCHYARD_SECRETS_DIR). Unset:
   * the defaults, with `secrets/` under `dataDir`.
   */
  secretReferences?: SecretReferencePolicy;
  /** Client connection timeouts and cap that differ from the defaults (http-settings.ts). */
  http?: Partial<HttpSettings>;
  /** Programmatic overrides of the observability settings read from OTEL_* and SWITCHYARD_* (observability-settings.ts). */
  observability?: ObservabilityOverrides;
}

export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

export function readEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  const port = integer(env.PORT, 8080, 'PORT');
  const durability = (env.SWITCHYARD_DURABILITY ?? 'default') as DurabilityProfile;
  if (!DURABILITY_PROFILES.includes(durability)) {
    throw new ConfigurationError(`SWITCHYARD_DURABILITY must be one of ${DURABILITY_PROFILES.join(', ')}`);
  }
  let configPath = env.SWITCHYARD_CONFIG ? resolve(env.SWITCHYARD_CONFIG) : null;
  if (!configPath && existsSync('switchyard.yaml')) configPath = resolve('switchyard.yaml');
  const logLevel = (env.LOG_LEVEL ?? 'log') as Environment['logLevel'];
  const databaseUrl = env.DATABASE_URL || null;
  const workers = env.SWITCHYARD_WORKERS === 'auto' ? availableParallelism() : integer(env.SWITCHYARD_WORKERS, 1, 'SWITCHYARD_WORKERS');
  if (workers < 1) throw new ConfigurationError("SWITCHYARD_WORKERS must be a positive integer or 'auto'");
  if (workers > 1 && !databaseUrl) {
    throw new ConfigurationError('SWITCHYARD_WORKERS above 1 needs DATABASE_URL: the embedded PGlite store belongs to one process');
  }
  const projector = (env.SWITCHYARD_PROJECTOR || 'embedded') as Environment['projector'];
  if (projector !== 'embedded' && projector !== 'external') throw new ConfigurationError('SWITCHYARD_PROJECTOR must be embedded or external');
  if (projector === 'external' && !databaseUrl) {
    throw new ConfigurationError('SWITCHYARD_PROJECTOR=external needs DATABASE_URL: with embedded PGlite the projections run in the serving process');
  }
  const dataDir = env.SWITCHYARD_DATA_DIR === ':memory:' ? ':memory:' : resolve(env.SWITCHYARD_DATA_DIR || '.switchyard');
  let secretReferences: SecretReferencePolicy;
  try {
    secretReferences = secretReferencePolicy(env, dataDir);
  } catch (error) {
    if (error instanceof SecretPolicyError) throw new ConfigurationError(error.message);
    throw error;
  }
  return {
    port,
    host: env.HOST || '127.0.0.1',
    configPath,
    dataDir,
    databaseUrl,
    redisUrl: env.REDIS_URL || null,
    clickhouseUrl: env.CLICKHOUSE_URL || null,
    adminToken: env.ADMIN_TOKEN || null,
    durability,
    pollIntervalMs: integer(env.SWITCHYARD_POLL_MS, 1000, 'SWITCHYARD_POLL_MS'),
    listen: !['off', 'false', '0', 'no'].includes((env.SWITCHYARD_LISTEN ?? '').toLowerCase()),
    nodeId: env.SWITCHYARD_NODE_ID || `${hostname()}:${process.pid}`,
    logLevel: ['error', 'warn', 'log', 'debug'].includes(logLevel) ? logLevel : 'log',
    resilience: readResilience(env),
    admission: readAdmission(env),
    workers,
    projector,
    secretReferences,
    http: readHttp(env),
  };
}

/** Only the variables that are set; each must be a positive integer (none of these bounds can be switched off). */
function readHttp(env: NodeJS.ProcessEnv): Partial<HttpSettings> {
  const positive = (name: string) => {
    if (env[name] === undefined || env[name] === '') return undefined;
    const value = integer(env[name], 0, name);
    if (value === 0) throw new ConfigurationError(`${name} must be a positive integer`);
    return value;
  };
  const http = prune({
    headersTimeoutMs: positive('SWITCHYARD_HTTP_HEADERS_TIMEOUT_MS'),
    bodyTimeoutMs: positive('SWITCHYARD_HTTP_BODY_TIMEOUT_MS'),
    keepAliveTimeoutMs: positive('SWITCHYARD_HTTP_KEEPALIVE_TIMEOUT_MS'),
    maxConnections: positive('SWITCHYARD_HTTP_MAX_CONNECTIONS'),
  });
  const headers = http.headersTimeoutMs ?? DEFAULT_HTTP_SETTINGS.headersTimeoutMs;
  const body = http.bodyTimeoutMs ?? DEFAULT_HTTP_SETTINGS.bodyTimeoutMs;
  if (headers > body) {
    throw new ConfigurationError(`SWITCHYARD_HTTP_HEADERS_TIMEOUT_MS (${headers}) must not exceed SWITCHYARD_HTTP_BODY_TIMEOUT_MS (${body}): the body timeout covers the headers too`);
  }
  return http;
}

/** Only the variables that are set; everything else keeps its default. */
function readResilience(env: NodeJS.ProcessEnv): ResilienceOverrides {
  const pick = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : integer(env[name], 0, name));
  const positive = (name: string) => {
    const value = pick(name);
    if (value === 0) throw new ConfigurationError(`${name} must be a positive integer`);
    return value;
  };
  const rate = env.SWITCHYARD_BREAKER_FAILURE_RATE;
  if (rate !== undefined && rate !== '' && !(Number(rate) > 0 && Number(rate) < 1)) {
    throw new ConfigurationError('SWITCHYARD_BREAKER_FAILURE_RATE must be a number between 0 and 1');
  }
  return prune({
    deadlines: prune({
      connectTimeoutMs: positive('SWITCHYARD_CONNECT_TIMEOUT_MS'),
      ttftTimeoutMs: positive('SWITCHYARD_TTFT_TIMEOUT_MS'),
      idleTimeoutMs: positive('SWITCHYARD_IDLE_TIMEOUT_MS'),
      streamTimeoutMs: positive('SWITCHYARD_STREAM_TIMEOUT_MS'),
      requestTimeoutMs: positive('SWITCHYARD_REQUEST_TIMEOUT_MS'),
      writeProgressTimeoutMs: positive('SWITCHYARD_WRITE_PROGRESS_TIMEOUT_MS'),
    }),
    retry: prune({
      maxAttempts: positive('SWITCHYARD_MAX_ATTEMPTS'),
      baseBackoffMs: pick('SWITCHYARD_RETRY_BASE_MS'),
      maxBackoffMs: pick('SWITCHYARD_RETRY_MAX_MS'),
      maxRetryAfterWaitMs: pick('SWITCHYARD_RETRY_AFTER_MAX_WAIT_MS'),
    }),
    breaker: prune({
      windowMs: positive('SWITCHYARD_BREAKER_WINDOW_MS'),
      minSamples: positive('SWITCHYARD_BREAKER_MIN_SAMPLES'),
      failureRateThreshold: rate === undefined || rate === '' ? undefined : Number(rate),
      consecutiveFailures: positive('SWITCHYARD_BREAKER_CONSECUTIVE_FAILURES'),
      cooldownMs: positive('SWITCHYARD_BREAKER_COOLDOWN_MS'),
      maxCooldownMs: positive('SWITCHYARD_BREAKER_MAX_COOLDOWN_MS'),
      trialSuccesses: positive('SWITCHYARD_BREAKER_TRIAL_SUCCESSES'),
      maxTrialsInFlight: positive('SWITCHYARD_BREAKER_MAX_TRIALS'),
    }),
  });
}

function readAdmission(env: NodeJS.ProcessEnv): Partial<AdmissionSettings> {
  // 0 means unlimited for the concurrency limits.
  const limit = (name: string) => {
    if (env[name] === undefined || env[name] === '') return undefined;
    const value = integer(env[name], 0, name);
    return value === 0 ? null : value;
  };
  const queueDepth = env.SWITCHYARD_ADMISSION_QUEUE_DEPTH ? integer(env.SWITCHYARD_ADMISSION_QUEUE_DEPTH, 0, 'SWITCHYARD_ADMISSION_QUEUE_DEPTH') : undefined;
  const queueWaitMs = env.SWITCHYARD_ADMISSION_QUEUE_WAIT_MS ? integer(env.SWITCHYARD_ADMISSION_QUEUE_WAIT_MS, 0, 'SWITCHYARD_ADMISSION_QUEUE_WAIT_MS') : undefined;
  if (queueDepth && !queueWaitMs) {
    throw new ConfigurationError('SWITCHYARD_ADMISSION_QUEUE_DEPTH needs a positive SWITCHYARD_ADMISSION_QUEUE_WAIT_MS (a queue without a wait deadline is unbounded)');
  }
  return prune({
    maxConcurrentRequests: limit('SWITCHYARD_MAX_CONCURRENT_REQUESTS'),
    maxConcurrentStreams: limit('SWITCHYARD_MAX_CONCURRENT_STREAMS'),
    queueDepth,
    queueWaitMs,
  });
}

/** Drops undefined members (and empty nested objects) so spreading over defaults keeps them. */
function prune<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (member === undefined) continue;
    if (member && typeof member === 'object' && Object.keys(member).length === 0) continue;
    out[key] = member;
  }
  return out as T;
}

function integer(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new ConfigurationError(`${name} must be a non-negative integer`);
  return parsed;
}
