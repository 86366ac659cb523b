import type { Redis } from 'ioredis';
import type { BudgetCounter, BudgetDecision, BudgetStore, SettledChange } from './budget-store.js';

/**
 * KEYS: committed1, settled1, committed2, settled2, …; ARGV: cost, then limit (-1 = none), seed (-1 =
 * unknown) and ttl per counter. Seeds a missing counter, checks every limit, then charges all or none.
 */
const RESERVE = `
local cost = tonumber(ARGV[1])
local n = #KEYS / 2
for i = 1, n do
  if redis.call('EXISTS', KEYS[2 * i - 1]) == 0 then
    local seed = tonumber(ARGV[3 * i])
    if seed < 0 then return { -1, i - 1 } end
    local ttl = tonumber(ARGV[3 * i + 1])
    redis.call('SET', KEYS[2 * i - 1], seed, 'EX', ttl)
    redis.call('SET', KEYS[2 * i], seed, 'EX', ttl)
  end
end
local committed = {}
for i = 1, n do
  local limit = tonumber(ARGV[3 * i - 1])
  local used = tonumber(redis.call('GET', KEYS[2 * i - 1]))
  if limit >= 0 and used + cost > limit then return { 0, i - 1, used } end
  committed[i] = used
end
local out = { 1 }
for i = 1, n do out[#out + 1] = redis.call('INCRBY', KEYS[2 * i - 1], cost) end
return out
`;

/** KEYS as above; ARGV: reserved, actual. Returns settled before/after per counter (-1, -1 when lost). */
const SETTLE = `
local reserved = tonumber(ARGV[1])
local actual = tonumber(ARGV[2])
local out = {}
for i = 1, #KEYS / 2 do
  if redis.call('EXISTS', KEYS[2 * i - 1]) == 1 and redis.call('EXISTS', KEYS[2 * i]) == 1 then
    local committed = redis.call('INCRBY', KEYS[2 * i - 1], actual - reserved)
    if committed < 0 then redis.call('SET', KEYS[2 * i - 1], 0, 'KEEPTTL') end
    local after = redis.call('INCRBY', KEYS[2 * i], actual)
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
  switchyardBudgetReserve(...args: Array<string | number>): Promise<number[]>;
  switchyardBudgetSettle(...args: Array<string | number>): Promise<number[]>;
};

/** Budget counters in Redis, shared by every node: concurrent requests on any node see each other's reservations. */
export class RedisBudgetStore implements BudgetStore {
  private readonly redis: Scripted;

  constructor(redis: Redis, private readonly prefix: string) {
    redis.defineCommand('switchyardBudgetReserve', { lua: RESERVE });
    redis.defineCommand('switchyardBudgetSettle', { lua: SETTLE });
    this.redis = redis as Scripted;
  }

  async reserve(counters: readonly BudgetCounter[], cost: number): Promise<BudgetDecision> {
    const keys = counters.flatMap((c) => [`${this.prefix}${c.key}:committed`, `${this.prefix}${c.key}:settled`]);
    const args: Array<string | number> = [keys.length, ...keys, cost];
    for (const c of counters) args.push(c.limit ?? -1, c.seed ?? -1, c.ttlSeconds);
    const reply = (await this.redis.switchyardBudgetReserve(...args)).map(Number);
    if (reply[0] === -1) return { kind: 'needs_seed', missing: reply[1] };
    if (reply[0] === 0) return { kind: 'refused', refused: reply[1], committed: reply[2] };
    return { kind: 'reserved', committed: reply.slice(1) };
  }

  async settle(keys: readonly string[], reserved: number, actual: number): Promise<SettledChange[]> {
    const redisKeys = keys.flatMap((key) => [`${this.prefix}${key}:committed`, `${this.prefix}${key}:settled`]);
    const reply = (await this.redis.switchyardBudgetSettle(redisKeys.length, ...redisKeys, reserved, actual)).map(Number);
    return keys.map((_, i) => (reply[2 * i] < 0 ? null : { before: reply[2 * i], after: reply[2 * i + 1] }));
  }
}
