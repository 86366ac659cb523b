import type { Redis } from 'ioredis';
import { type IdempotencyClaim, type IdempotencyRecord, type IdempotencyStore, claimOf } from './idempotency-store.js';
import { type StoredAnswer, storedBytes } from './stored-answer.js';

/** Acts only on the caller's own pending record: a lease that ran out may belong to a new owner by now. */
const IF_PENDING_OWNER = `
local text = redis.call('GET', KEYS[1])
if not text then return 0 end
local record = cjson.decode(text)
if record.state ~= 'pending' or record.owner ~= ARGV[1] then return 0 end
`;

const RENEW = `${IF_PENDING_OWNER}
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

const SETTLE = `${IF_PENDING_OWNER}
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

const ABANDON = `${IF_PENDING_OWNER}
redis.call('DEL', KEYS[1])
return 1`;

/**
 * Idempotency records in Redis, shared by every node: `SET NX PX` takes a key (one owner, however many
 * nodes race for it), and the owner's renew/settle/abandon are Lua scripts that check ownership and
 * write in one step.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly redis: Redis,
    private readonly namespace: string,
    private readonly maxEntryBytes: number,
  ) {}

  async claim(scope: string, fingerprint: string, owner: string, leaseMs: number): Promise<IdempotencyClaim> {
    const key = this.keyOf(scope);
    const pending: IdempotencyRecord = { state: 'pending', fingerprint, owner };
    // The record can expire between a failed SET NX and the GET: then try to take it again.
    for (;;) {
      if ((await this.redis.set(key, JSON.stringify(pending), 'PX', leaseMs, 'NX')) === 'OK') return { kind: 'owner' };
      const text = await this.redis.get(key);
      if (text !== null) return claimOf(JSON.parse(text) as IdempotencyRecord, fingerprint);
    }
  }

  async renew(scope: string, owner: string, leaseMs: number): Promise<void> {
    await this.redis.eval(RENEW, 1, this.keyOf(scope), owner, leaseMs);
  }

  async settle(scope: string, owner: string, answer: StoredAnswer, retentionMs: number): Promise<void> {
    if (storedBytes(answer) > this.maxEntryBytes) {
      await this.abandon(scope, owner);
      return;
    }
    const key = this.keyOf(scope);
    const text = await this.redis.get(key);
    if (text === null) return;
    const record = JSON.parse(text) as IdempotencyRecord;
    const done: IdempotencyRecord = { state: 'done', fingerprint: record.fingerprint, owner, answer };
    await this.redis.eval(SETTLE, 1, key, owner, JSON.stringify(done), retentionMs);
  }

  async abandon(scope: string, owner: string): Promise<void> {
    await this.redis.eval(ABANDON, 1, this.keyOf(scope), owner);
  }

  private keyOf(scope: string): string {
    return `${this.namespace}:idempotency:${scope}`;
  }
}
