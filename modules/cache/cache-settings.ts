import { ConfigurationError, type SettingDeclaration, type SettingsEnv, declareSettings, definedOnly, positiveIntegerSetting, textSetting } from '../../src/kernel/index.js';

/**
 * The exact cache and idempotency knobs (environment variables). Both stores hold content (answers), so
 * every one of them is bounded: by time always, and by bytes when the store is this process's memory.
 */
export interface CacheKnobs {
  /** `SWITCHYARD_CACHE`: `on` (default) or `off` for the whole node; aliases and requests can opt out on their own. */
  exactCacheEnabled: boolean;
  /** How long an exact-cache entry serves hits. */
  exactCacheTtlMs: number;
  /** In-memory exact cache (no REDIS_URL): the most bytes of answers held; least recently used go first. */
  exactCacheMaxBytes: number;
  /** The largest answer either store keeps (a bigger one is simply not stored). */
  maxEntryBytes: number;
  /** How long a finished outcome answers retries with the same Idempotency-Key. */
  idempotencyRetentionMs: number;
  /** In-memory idempotency store (no REDIS_URL): the most bytes of stored outcomes. */
  idempotencyMaxBytes: number;
  /** Prefix of every Redis key of both stores, so gateways with separate event stores can share one Redis. */
  namespace: string;
}

export const DEFAULT_CACHE_KNOBS: CacheKnobs = Object.freeze({
  exactCacheEnabled: true,
  exactCacheTtlMs: 3_600_000,
  exactCacheMaxBytes: 64 * 1024 * 1024,
  maxEntryBytes: 1024 * 1024,
  idempotencyRetentionMs: 600_000,
  idempotencyMaxBytes: 32 * 1024 * 1024,
  namespace: 'switchyard',
});

const DEFAULTS = DEFAULT_CACHE_KNOBS;

/** The variables readCacheOverrides reads; the defaults shown are DEFAULT_CACHE_KNOBS'. */
export const CACHE_ENVIRONMENT = declareSettings('modules/cache', {
  SWITCHYARD_CACHE: {
    type: '`on` | `off`',
    default: `\`${DEFAULTS.exactCacheEnabled ? 'on' : 'off'}\``,
    meaning: 'the exact cache for the whole node; aliases (`policy.cache: false`) and requests can opt out on their own',
  },
  SWITCHYARD_CACHE_TTL_SECONDS: {
    type: 'integer > 0 (seconds)',
    default: `\`${DEFAULTS.exactCacheTtlMs / 1000}\``,
    meaning: 'how long an exact-cache entry serves hits',
  },
  SWITCHYARD_CACHE_MAX_BYTES: {
    type: 'integer > 0 (bytes)',
    default: `\`${DEFAULTS.exactCacheMaxBytes}\` (${DEFAULTS.exactCacheMaxBytes / 1024 / 1024} MiB)`,
    meaning: 'in-memory exact cache (no REDIS_URL): the most bytes of answers held; least recently used go first',
  },
  SWITCHYARD_CACHE_MAX_ENTRY_BYTES: {
    type: 'integer > 0 (bytes)',
    default: `\`${DEFAULTS.maxEntryBytes}\` (${DEFAULTS.maxEntryBytes / 1024 / 1024} MiB)`,
    meaning: 'the largest answer the exact cache or the idempotency store keeps (a bigger one is simply not stored)',
  },
  SWITCHYARD_IDEMPOTENCY_RETENTION_SECONDS: {
    type: 'integer > 0 (seconds)',
    default: `\`${DEFAULTS.idempotencyRetentionMs / 1000}\``,
    meaning: 'how long a finished outcome answers retries with the same `Idempotency-Key`',
  },
  SWITCHYARD_IDEMPOTENCY_MAX_BYTES: {
    type: 'integer > 0 (bytes)',
    default: `\`${DEFAULTS.idempotencyMaxBytes}\` (${DEFAULTS.idempotencyMaxBytes / 1024 / 1024} MiB)`,
    meaning: 'in-memory idempotency store (no REDIS_URL): the most bytes of stored outcomes',
  },
  SWITCHYARD_REDIS_NAMESPACE: {
    type: '1 to 64 characters of `A-Z a-z 0-9 . _ -`',
    default: `\`${DEFAULTS.namespace}\``,
    meaning: 'prefix of every Redis key and channel of the gateway (cache, idempotency, console sessions, rate limits, budgets and shared concurrency as the hash tag `{<namespace>}`, breaker signals), so gateways with separate event stores can share one Redis',
  },
});

/** The cache context's resolved settings: its knobs, and where the shared stores live. */
export interface CacheSettings extends CacheKnobs {
  /** Both stores in Redis (shared by every node); null = in this process. */
  redisUrl: string | null;
  /** Names this node's Redis connection. */
  nodeId: string;
}

/** DI token of the cache context's resolved settings. */
export const CACHE_SETTINGS = Symbol('CACHE_SETTINGS');

/** Only the variables that are set; the sizes and durations must be positive integers. */
export function readCacheOverrides(env: SettingsEnv): Partial<CacheKnobs> {
  const seconds = (setting: SettingDeclaration) => {
    const value = positiveIntegerSetting(env, setting);
    return value === undefined ? undefined : value * 1000;
  };
  const switchValue = (textSetting(env, CACHE_ENVIRONMENT.SWITCHYARD_CACHE) ?? '').toLowerCase();
  if (switchValue !== '' && switchValue !== 'on' && switchValue !== 'off') throw new ConfigurationError('SWITCHYARD_CACHE must be on or off');
  const namespace = textSetting(env, CACHE_ENVIRONMENT.SWITCHYARD_REDIS_NAMESPACE) || undefined;
  if (namespace !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(namespace)) {
    throw new ConfigurationError('SWITCHYARD_REDIS_NAMESPACE must be 1 to 64 characters of A-Z a-z 0-9 . _ -');
  }
  return definedOnly({
    exactCacheEnabled: switchValue === '' ? undefined : switchValue === 'on',
    exactCacheTtlMs: seconds(CACHE_ENVIRONMENT.SWITCHYARD_CACHE_TTL_SECONDS),
    exactCacheMaxBytes: positiveIntegerSetting(env, CACHE_ENVIRONMENT.SWITCHYARD_CACHE_MAX_BYTES),
    maxEntryBytes: positiveIntegerSetting(env, CACHE_ENVIRONMENT.SWITCHYARD_CACHE_MAX_ENTRY_BYTES),
    idempotencyRetentionMs: seconds(CACHE_ENVIRONMENT.SWITCHYARD_IDEMPOTENCY_RETENTION_SECONDS),
    idempotencyMaxBytes: positiveIntegerSetting(env, CACHE_ENVIRONMENT.SWITCHYARD_IDEMPOTENCY_MAX_BYTES),
    namespace,
  });
}

export function resolveCacheSettings(overrides: Partial<CacheKnobs> | undefined, redisUrl: string | null, nodeId: string): CacheSettings {
  return Object.assign({}, DEFAULT_CACHE_KNOBS, overrides, { redisUrl, nodeId });
}
