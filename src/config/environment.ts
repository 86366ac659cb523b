import { existsSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import { resolve } from 'node:path';
import { readAdminSettings } from '../../modules/admin/admin-settings.js';
import { type HttpSettings, readHttpOverrides } from '../../modules/inference/http/http-settings.js';
import { readDocumentOverrides } from '../../modules/inference/pipeline/document-settings.js';
import type { DocumentLimits } from '../../modules/canonical/index.js';
import { type DurabilityProfile, readDurability } from '../../modules/inference/pipeline/durability.js';
import { type ResilienceOverrides, readResilienceOverrides } from '../../modules/inference/resilience/resilience-settings.js';
import { type AdmissionSettings, readAdmissionOverrides } from '../../modules/limits/admission-settings.js';
import { type CacheKnobs, readCacheOverrides } from '../../modules/cache/cache-settings.js';
import { type ConsoleKnobs, readConsoleOverrides } from '../../modules/console/console-settings.js';
import { type ContentSafetyOverrides, readContentSafetyOverrides } from '../../modules/content-safety/content-safety-settings.js';
import { type ObservabilityOverrides, ObservabilitySettingsError, readObservabilitySettings } from '../../modules/observability/observability-settings.js';
import type { AuditSettings } from '../../projections/audit-chain/index.js';
import { DEFAULT_SPOOL_MAX_BYTES, DEFAULT_SPOOL_SEGMENT_BYTES, SPOOL_ENVIRONMENT, type SpoolSettings, defaultSpoolDirectory } from '../kernel/event-store/spool/spool-settings.js';
import { EVENT_STORE_ENVIRONMENT } from '../kernel/event-store/event-store-settings.js';
import type { SettingDeclaration } from '../kernel/setting-declaration.js';
import { ConfigurationError } from '../kernel/configuration-error.js';
import { DEFAULT_DATA_DIR, integerSetting, textSetting } from '../kernel/settings.js';
import { DEFAULT_CONFIG_FILE, DEFAULT_HOST, DEFAULT_LOG_LEVEL, DEFAULT_POLL_MS, DEFAULT_PORT, LISTEN_OFF, LOG_LEVELS, SERVING_ENVIRONMENT } from './environment-settings.js';
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
  /** Document size limits that differ from the defaults (document-settings.ts). */
  documents?: Partial<DocumentLimits>;
  /** Exact cache and idempotency knobs that differ from the defaults (cache-settings.ts). */
  cache?: Partial<CacheKnobs>;
  /** The PII key's reference and the session vault's TTL (content-safety-settings.ts). */
  contentSafety?: ContentSafetyOverrides;
  /** Observability settings that differ from the defaults: read from OTEL_* and SWITCHYARD_* (observability-settings.ts), or set by a caller. */
  observability?: ObservabilityOverrides;
  /** The outage spool (PostgreSQL deployments); absent = the defaults under `dataDir`. */
  spool?: SpoolSettings;
  /** Console sessions, sign-in bounds and single sign-on that differ from the defaults (console-settings.ts). */
  console?: Partial<ConsoleKnobs>;
}

export { ConfigurationError };

export function readEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  const read = (setting: SettingDeclaration) => textSetting(env, setting);
  const integer = (setting: SettingDeclaration, fallback: number) => integerSetting(env, setting) ?? fallback;
  const { PORT, HOST, SWITCHYARD_CONFIG, LOG_LEVEL, REDIS_URL, CLICKHOUSE_URL, SWITCHYARD_WORKERS, SWITCHYARD_PROJECTOR, SWITCHYARD_POLL_MS, SWITCHYARD_LISTEN, SWITCHYARD_NODE_ID } = SERVING_ENVIRONMENT;
  const { DATABASE_URL, SWITCHYARD_DATA_DIR } = EVENT_STORE_ENVIRONMENT;
  const { SWITCHYARD_SPOOL_DIR, SWITCHYARD_SPOOL_MAX_BYTES } = SPOOL_ENVIRONMENT;
  const port = integer(PORT, DEFAULT_PORT);
  const durability = readDurability(env);
  const configFile = read(SWITCHYARD_CONFIG);
  let configPath = configFile ? resolve(configFile) : null;
  if (!configPath && existsSync(DEFAULT_CONFIG_FILE)) configPath = resolve(DEFAULT_CONFIG_FILE);
  const logLevel = (read(LOG_LEVEL) ?? DEFAULT_LOG_LEVEL) as Environment['logLevel'];
  const databaseUrl = read(DATABASE_URL) || null;
  const workers = read(SWITCHYARD_WORKERS) === 'auto' ? availableParallelism() : integer(SWITCHYARD_WORKERS, 1);
  if (workers < 1) throw new ConfigurationError("SWITCHYARD_WORKERS must be a positive integer or 'auto'");
  if (workers > 1 && !databaseUrl) {
    throw new ConfigurationError('SWITCHYARD_WORKERS above 1 needs DATABASE_URL: the embedded PGlite store belongs to one process');
  }
  const projector = (read(SWITCHYARD_PROJECTOR) || 'embedded') as Environment['projector'];
  if (projector !== 'embedded' && projector !== 'external') throw new ConfigurationError('SWITCHYARD_PROJECTOR must be embedded or external');
  if (projector === 'external' && !databaseUrl) {
    throw new ConfigurationError('SWITCHYARD_PROJECTOR=external needs DATABASE_URL: with embedded PGlite the projections run in the serving process');
  }
  const dataDirSetting = read(SWITCHYARD_DATA_DIR);
  const dataDir = dataDirSetting === ':memory:' ? ':memory:' : resolve(dataDirSetting || DEFAULT_DATA_DIR);
  let secretReferences: SecretReferencePolicy;
  try {
    secretReferences = secretReferencePolicy(env, dataDir);
  } catch (error) {
    if (error instanceof SecretPolicyError) throw new ConfigurationError(error.message);
    throw error;
  }
  let observability: ObservabilityOverrides;
  try {
    observability = readObservabilitySettings(env);
  } catch (error) {
    if (error instanceof ObservabilitySettingsError) throw new ConfigurationError(error.message);
    throw error;
  }
  const spoolDir = read(SWITCHYARD_SPOOL_DIR);
  return {
    port,
    host: read(HOST) || DEFAULT_HOST,
    configPath,
    dataDir,
    databaseUrl,
    redisUrl: read(REDIS_URL) || null,
    clickhouseUrl: read(CLICKHOUSE_URL) || null,
    adminToken: readAdminSettings(env).adminToken,
    durability,
    pollIntervalMs: integer(SWITCHYARD_POLL_MS, DEFAULT_POLL_MS),
    listen: !(LISTEN_OFF as readonly string[]).includes((read(SWITCHYARD_LISTEN) ?? '').toLowerCase()),
    nodeId: read(SWITCHYARD_NODE_ID) || `${hostname()}:${process.pid}`,
    logLevel: (LOG_LEVELS as readonly string[]).includes(logLevel) ? logLevel : DEFAULT_LOG_LEVEL,
    resilience: readResilienceOverrides(env),
    admission: readAdmissionOverrides(env),
    workers,
    projector,
    secretReferences,
    http: readHttpOverrides(env),
    documents: readDocumentOverrides(env),
    cache: readCacheOverrides(env),
    contentSafety: readContentSafetyOverrides(env),
    console: readConsoleOverrides(env),
    observability,
    spool: {
      directory: spoolDir ? resolve(spoolDir) : defaultSpoolDirectory(dataDir),
      maxBytes: integer(SWITCHYARD_SPOOL_MAX_BYTES, DEFAULT_SPOOL_MAX_BYTES),
      segmentBytes: DEFAULT_SPOOL_SEGMENT_BYTES,
    },
  };
}
