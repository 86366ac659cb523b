import { Inject, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { CACHE_SETTINGS, type CacheSettings } from './cache-settings.js';
import type { ExactCache } from './exact-cache.js';
import type { IdempotencyStore } from './idempotency-store.js';
import { MemoryExactCache } from './memory-exact-cache.js';
import { MemoryIdempotencyStore } from './memory-idempotency-store.js';
import { RedisExactCache } from './redis-exact-cache.js';
import { RedisIdempotencyStore } from './redis-idempotency-store.js';

export const EXACT_CACHE = Symbol('EXACT_CACHE');
export const IDEMPOTENCY_STORE = Symbol('IDEMPOTENCY_STORE');
/** The stores' Redis connection, or null without REDIS_URL. */
const CACHE_REDIS = Symbol('CACHE_REDIS');

/**
 * Stored answers — the exact cache and idempotent outcomes — outside the event log, because they are
 * content. With REDIS_URL both live in Redis (shared by every node, expiring there); without it, in this
 * process, bounded by bytes. Redis that is unreachable fails each operation quickly (no offline queue):
 * the pipeline then treats it as a miss and serves the request.
 */
@Module({
  providers: [
    {
      provide: CACHE_REDIS,
      useFactory: (settings: CacheSettings): Redis | null => {
        if (!settings.redisUrl) return null;
        const redis = new Redis(settings.redisUrl, {
          enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1_000, connectionName: `switchyard-cache-${settings.nodeId}`,
        });
        redis.on('error', () => undefined); // failures surface per command; reconnection is automatic
        return redis;
      },
      inject: [CACHE_SETTINGS],
    },
    {
      provide: EXACT_CACHE,
      useFactory: (settings: CacheSettings, redis: Redis | null): ExactCache =>
        redis ? new RedisExactCache(redis, settings.namespace, settings.maxEntryBytes) : new MemoryExactCache(settings.exactCacheMaxBytes, settings.maxEntryBytes),
      inject: [CACHE_SETTINGS, CACHE_REDIS],
    },
    {
      provide: IDEMPOTENCY_STORE,
      useFactory: (settings: CacheSettings, redis: Redis | null): IdempotencyStore =>
        redis ? new RedisIdempotencyStore(redis, settings.namespace, settings.maxEntryBytes) : new MemoryIdempotencyStore(settings.idempotencyMaxBytes, settings.maxEntryBytes),
      inject: [CACHE_SETTINGS, CACHE_REDIS],
    },
  ],
  exports: [EXACT_CACHE, IDEMPOTENCY_STORE],
})
export class CacheModule implements OnApplicationShutdown {
  constructor(@Inject(CACHE_REDIS) private readonly redis: Redis | null) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.redis) return;
    await this.redis.quit().catch(() => this.redis?.disconnect());
  }
}

/** Warns about an unreachable store at most once a minute, whatever the request rate. */
export class StoreOutageLog {
  private lastWarnedAt = 0;
  constructor(private readonly logger: Logger, private readonly what: string) {}

  failed(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarnedAt < 60_000) return;
    this.lastWarnedAt = now;
    this.logger.warn(`${this.what} unavailable, serving without it: ${(error as Error).message}`);
  }
}
