import { ByteBoundedLru } from './byte-bounded-lru.js';
import type { CacheEntryKey, CachePurge, ExactCache } from './exact-cache.js';
import { type StoredAnswer, storedBytes } from './stored-answer.js';

interface Entry {
  tenantId: string;
  alias: string;
  storedAt: number;
  answer: StoredAnswer;
}

/** The exact cache of one process (no REDIS_URL): a least-recently-used map bounded by bytes. */
export class MemoryExactCache implements ExactCache {
  private readonly entries: ByteBoundedLru<Entry>;

  constructor(
    maxBytes: number,
    private readonly maxEntryBytes: number,
    private readonly now: () => number = Date.now,
  ) {
    this.entries = new ByteBoundedLru<Entry>(maxBytes, now);
  }

  /** Bytes of answers held (the bound is enforced on this). */
  get bytes(): number {
    return this.entries.bytes;
  }

  async get(key: CacheEntryKey): Promise<StoredAnswer | null> {
    return this.entries.get(slotOf(key))?.answer ?? null;
  }

  async put(key: CacheEntryKey, answer: StoredAnswer, ttlMs: number): Promise<void> {
    const slot = slotOf(key);
    const bytes = storedBytes(answer) + slot.length;
    if (bytes > this.maxEntryBytes) return;
    this.entries.set(slot, { tenantId: key.tenantId, alias: key.alias, storedAt: this.now(), answer }, bytes, ttlMs);
  }

  async purge(filter: CachePurge): Promise<number> {
    return this.entries.deleteWhere((_slot, entry) =>
      (filter.tenantId === null || entry.tenantId === filter.tenantId) &&
      (filter.alias === null || entry.alias === filter.alias) &&
      (filter.storedBefore === null || entry.storedAt < filter.storedBefore));
  }
}

function slotOf(key: CacheEntryKey): string {
  return `${key.tenantId}\u0000${key.alias}\u0000${key.digest}`;
}
