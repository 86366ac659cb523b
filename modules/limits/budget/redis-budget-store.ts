import type { Redis } from 'ioredis';
import type { BudgetCounter, BudgetDecision, BudgetHold, BudgetStore, ExpiredHold, SettledChange } from './budget-store.js';

/**
 * KEYS: committed1, settled1, holds1, committed2, …; ARGV: cost, hold member (`cost:requestId`), now,
 * hold end, then limit (-1 = none), seed (-1 = unknown) and ttl per counter. Seeds a missing counter,
 * checks every limit, then charges all or none and records the hold. The holds that expired (their node
 * died before settling) are taken out and returned, to be reconciled with what their requests were billed.
 * Reply: { decision, { counter index, member, … } }; a refusal's decision is { 0, counter index, committed, settled }.
 */
const RESERVE = `
local cost = tonumber(ARGV[1])
local now = tonumber(ARGV[3])
local n = #KEYS / 3
for i = 1, n do
  if redis.call('EXISTS', KEYS[3 * i - 2]) == 0 then
    local seed = tonumber(ARGV[3 * i + 3])
    if seed < 0 then return { { -1, i - 1 }, {} } end
    local ttl = tonumber(ARGV[3 * i + 4])
    redis.call('SET', KEYS[3 * i - 2], seed, 'EX', ttl)
    redis.call('SET', KEYS[3 * i - 1], seed, 'EX', ttl)
    redis.call('DEL', KEYS[3 * i])
  end
end
local claimed = {}
for i = 1, n do
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3 * i], '-inf', now)) do
    claimed[#claimed + 1] = i - 1
    claimed[#claimed + 1] = member
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[3 * i], '-inf', now)
end
local committed = {}
for i = 1, n do
  local limit = tonumber(ARGV[3 * i + 2])
  local used = tonumber(redis.call('GET', KEYS[3 * i - 2]))
  if limit >= 0 and used + cost > limit then return { { 0, i - 1, used, tonumber(redis.call('GET', KEYS[3 * i - 1])) }, claimed } end
  committed[i] = used
end
local out = { 1 }
for i = 1, n do
  out[#out + 1] = redis.call('INCRBY', KEYS[3 * i - 2], cost)
  if cost > 0 then
    redis.call('ZADD', KEYS[3 * i], tonumber(ARGV[4]), ARGV[2])
    redis.call('EXPIRE', KEYS[3 * i], tonumber(ARGV[3 * i + 4]))
  end
end
return { out, claimed }
`;

/**
 * KEYS as above; ARGV: reserved, actual, hold member (empty: the hold was already taken out, settle
 * regardless). Replaces the reservation by the actual cost unless the hold is gone (an expired hold
 * that another node reconciled: counting it again would count it twice). Returns settled before/after
 * per counter (-1, -1 when lost or not held).
 */
const SETTLE = `
local reserved = tonumber(ARGV[1])
local actual = tonumber(ARGV[2])
local out = {}
for i = 1, #KEYS / 3 do
  local held = ARGV[3] == '' or redis.call('ZREM', KEYS[3 * i], ARGV[3]) == 1
  if held and redis.call('EXISTS', KEYS[3 * i - 2]) == 1 and redis.call('EXISTS', KEYS[3 * i - 1]) == 1 then
    local committed = redis.call('INCRBY', KEYS[3 * i - 2], actual - reserved)
    if committed < 0 then redis.call('SET', KEYS[3 * i - 2], 0, 'KEEPTTL') end
    local after = redis.call('INCRBY', KEYS[3 * i - 1], actual)
    out[#out + 1] = after - actual
    out[#out + 1] = after
  else
    out[#out + 1] = -1
    out[#out + 1] = -1
  end
end
return out
`;

type Scripted = Redis & {
  switchyardBudgetReserve(...args: Array<string | number>): Promise<[number[], string[]]>;
  switchyardBudgetSettle(...args: Array<string | number>): Promise<number[]>;
};

/**
 * Budget counters in Redis, shared by every node: concurrent requests on any node see each other's
 * reservations. Each reservation is also a hold (a sorted set per counter, member `cost:requestId`,
 * scored by when the request must have ended), so that a node killed with requests in flight leaves
 * their reservations behind only until then, not until the period ends: the next reservation on the
 * counter takes the expired holds out (one node only: atomically) and the guard reconciles each with
 * what its request was billed.
 */
export class RedisBudgetStore implements BudgetStore {
  private readonly redis: Scripted;

  constructor(redis: Redis, private readonly prefix: string) {
    redis.defineCommand('switchyardBudgetReserve', { lua: RESERVE });
    redis.defineCommand('switchyardBudgetSettle', { lua: SETTLE });
    this.redis = redis as Scripted;
  }

  async reserve(counters: readonly BudgetCounter[], cost: number, hold: BudgetHold): Promise<BudgetDecision> {
    const keys = counters.flatMap((c) => this.keysOf(c.key));
    const args: Array<string | number> = [keys.length, ...keys, cost, holdMember(cost, hold), hold.nowMs, hold.untilMs];
    for (const c of counters) args.push(c.limit ?? -1, c.seed ?? -1, c.ttlSeconds);
    const [raw, claimed] = await this.redis.switchyardBudgetReserve(...args);
    const reply = raw.map(Number);
    const expired: ExpiredHold[] = [];
    for (let i = 0; i < claimed.length; i += 2) {
      const member = String(claimed[i + 1]);
      const colon = member.indexOf(':');
      expired.push({ counter: Number(claimed[i]), reserved: Number(member.slice(0, colon)), requestId: member.slice(colon + 1) });
    }
    if (reply[0] === -1) return { kind: 'needs_seed', missing: reply[1], expired };
    if (reply[0] === 0) return { kind: 'refused', refused: reply[1], committed: reply[2], settled: reply[3], expired };
    return { kind: 'reserved', committed: reply.slice(1), expired };
  }

  async settle(keys: readonly string[], hold: BudgetHold | null, reserved: number, actual: number): Promise<SettledChange[]> {
    const redisKeys = keys.flatMap((key) => this.keysOf(key));
    const member = hold ? holdMember(reserved, hold) : '';
    const reply = (await this.redis.switchyardBudgetSettle(redisKeys.length, ...redisKeys, reserved, actual, member)).map(Number);
    return keys.map((_, i) => (reply[2 * i] < 0 ? null : { before: reply[2 * i], after: reply[2 * i + 1] }));
  }

  private keysOf(key: string): string[] {
    return [`${this.prefix}${key}:committed`, `${this.prefix}${key}:settled`, `${this.prefix}${key}:holds`];
  }
}

/** The hold's member in the sorted set: what was reserved (to give back when it expires) and the request. */
const holdMember = (cost: number, hold: BudgetHold) => `${cost}:${hold.requestId}`;
