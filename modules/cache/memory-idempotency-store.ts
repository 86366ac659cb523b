import { ByteBoundedLru } from './byte-bounded-lru.js';
import { type IdempotencyClaim, type IdempotencyRecord, type IdempotencyStore, claimOf } from './idempotency-store.js';
import { type StoredAnswer, storedBytes } from './stored-answer.js';

/** A pending record's footprint: the scope, fingerprint and owner, without an answer. */
const PENDING_BYTES = 256;

/**
 * Idempotency records of one process (no REDIS_URL), bounded by bytes: when full, the least recently
 * used outcomes go first (a retry of an evicted key simply runs again).
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records: ByteBoundedLru<IdempotencyRecord>;

  constructor(
    maxBytes: number,
    private readonly maxEntryBytes: number,
    now: () => number = Date.now,
  ) {
    this.records = new ByteBoundedLru<IdempotencyRecord>(maxBytes, now);
  }

  get bytes(): number {
    return this.records.bytes;
  }

  async claim(scope: string, fingerprint: string, owner: string, leaseMs: number): Promise<IdempotencyClaim> {
    const record = this.records.get(scope);
    if (record) return claimOf(record, fingerprint);
    this.records.set(scope, { state: 'pending', fingerprint, owner }, PENDING_BYTES, leaseMs);
    return { kind: 'owner' };
  }

  async renew(scope: string, owner: string, leaseMs: number): Promise<void> {
    const record = this.records.get(scope);
    if (record?.state === 'pending' && record.owner === owner) this.records.set(scope, record, PENDING_BYTES, leaseMs);
  }

  async settle(scope: string, owner: string, answer: StoredAnswer, retentionMs: number): Promise<void> {
    const record = this.records.get(scope);
    if (record?.state !== 'pending' || record.owner !== owner) return;
    const bytes = storedBytes(answer) + scope.length + PENDING_BYTES;
    const kept = bytes <= this.maxEntryBytes && this.records.set(scope, { state: 'done', fingerprint: record.fingerprint, owner, answer }, bytes, retentionMs);
    if (!kept) this.records.delete(scope);
  }

  async abandon(scope: string, owner: string): Promise<void> {
    const record = this.records.get(scope);
    if (record?.state === 'pending' && record.owner === owner) this.records.delete(scope);
  }
}
