import type { Redis } from 'ioredis';
import type { CacheEntryKey, CachePurge, ExactCache } from './exact-cache.js';
import { type StoredAnswer, storedBytes } from './stored-answer.js';

const SCAN_COUNT = 500;

/**
 * The exact cache in Redis, shared by every node. One hash per entry — `at` (when it was stored) and
 * `answer` — expiring with the entry's TTL. Tenant and alias are hex-encoded into the key, so a purge
 * selects them with a SCAN pattern that no id can widen (hex has no glob characters).
 */
export class RedisExactCache implements ExactCache {
  constructor(
    private readonly redis: Redis,
    private readonly namespace: string,
    private readonly maxEntryBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: CacheEntryKey): Promise<StoredAnswer | null> {
    const text = await this.redis.hget(this.keyOf(key), 'answer');
    return text === null ? null : (JSON.parse(text) as StoredAnswer);
  }

  async put(key: CacheEntryKey, answer: StoredAnswer, ttlMs: number): Promise<void> {
    if (storedBytes(answer) > this.maxEntryBytes) return;
    const redisKey = this.keyOf(key);
    await this.redis.multi().hset(redisKey, 'at', String(this.now()), 'answer', JSON.stringify(answer)).pexpire(redisKey, ttlMs).exec();
  }

  async purge(filter: CachePurge): Promise<number> {
    const tenant = filter.tenantId === null ? '*' : hex(filter.tenantId);
    const alias = filter.alias === null ? '*' : hex(filter.alias);
    const pattern = `${this.namespace}:cache:t:${tenant}:a:${alias}:*`;
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
      cursor = next;
      let doomed = keys;
      if (filter.storedBefore !== null && keys.length > 0) {
        const pipeline = this.redis.pipeline();
        for (const key of keys) pipeline.hget(key, 'at');
        const stored = (await pipeline.exec()) ?? [];
        doomed = keys.filter((_key, i) => {
          const at = stored[i]?.[1];
          return typeof at === 'string' && Number(at) < filter.storedBefore!;
        });
      }
      if (doomed.length > 0) deleted += await this.redis.unlink(...doomed);
    } while (cursor !== '0');
    return deleted;
  }

  private keyOf(key: CacheEntryKey): string {
    return `${this.namespace}:cache:t:${hex(key.tenantId)}:a:${hex(key.alias)}:${key.digest}`;
  }
}

function hex(value: string): string {
  return Buffer.from(value, 'utf8').toString('hex');
}
