/**
 * The exact cache and idempotency knobs (environment variables). Both stores hold content (answers), so
 * every one of them is bounded: by time always, and by bytes when the store is this process's memory.
 */
export interface CacheSettings {
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

export const DEFAULT_CACHE_SETTINGS: CacheSettings = Object.freeze({
  exactCacheEnabled: true,
  exactCacheTtlMs: 3_600_000,
  exactCacheMaxBytes: 64 * 1024 * 1024,
  maxEntryBytes: 1024 * 1024,
  idempotencyRetentionMs: 600_000,
  idempotencyMaxBytes: 32 * 1024 * 1024,
  namespace: 'switchyard',
});

export class CacheSettingsError extends Error {
  override readonly name = 'CacheSettingsError';
}

/** Only the variables that are set; each must be a positive integer. */
export function readCacheSettings(env: NodeJS.ProcessEnv): Partial<CacheSettings> {
  const positive = (name: string): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1) throw new CacheSettingsError(`${name} must be a positive integer`);
    return value;
  };
  const settings: Partial<CacheSettings> = {};
  const switchValue = (env.SWITCHYARD_CACHE ?? '').toLowerCase();
  if (switchValue !== '') {
    if (!['on', 'off'].includes(switchValue)) throw new CacheSettingsError('SWITCHYARD_CACHE must be on or off');
    settings.exactCacheEnabled = switchValue === 'on';
  }
  const ttl = positive('SWITCHYARD_CACHE_TTL_SECONDS');
  if (ttl !== undefined) settings.exactCacheTtlMs = ttl * 1000;
  const cacheBytes = positive('SWITCHYARD_CACHE_MAX_BYTES');
  if (cacheBytes !== undefined) settings.exactCacheMaxBytes = cacheBytes;
  const entryBytes = positive('SWITCHYARD_CACHE_MAX_ENTRY_BYTES');
  if (entryBytes !== undefined) settings.maxEntryBytes = entryBytes;
  const retention = positive('SWITCHYARD_IDEMPOTENCY_RETENTION_SECONDS');
  if (retention !== undefined) settings.idempotencyRetentionMs = retention * 1000;
  const idempotencyBytes = positive('SWITCHYARD_IDEMPOTENCY_MAX_BYTES');
  if (idempotencyBytes !== undefined) settings.idempotencyMaxBytes = idempotencyBytes;
  const namespace = env.SWITCHYARD_REDIS_NAMESPACE;
  if (namespace !== undefined && namespace !== '') {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(namespace)) throw new CacheSettingsError('SWITCHYARD_REDIS_NAMESPACE must be 1 to 64 characters of A-Z a-z 0-9 . _ -');
    settings.namespace = namespace;
  }
  return settings;
}

export function resolveCacheSettings(overrides: Partial<CacheSettings> | undefined): CacheSettings {
  return { ...DEFAULT_CACHE_SETTINGS, ...overrides };
}
