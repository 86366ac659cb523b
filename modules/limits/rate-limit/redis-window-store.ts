import type { Redis } from 'ioredis';
import { type CounterCharge, type WindowDecision, type WindowStore, SLOT_MS, WINDOW_MS, WINDOW_SLOTS, slotOf } from './rate-window.js';

/**
 * Counters in Redis, shared by every node: one hash per counter (field = slot, value = units). One
 * script reads, decides and charges every counter of a request atomically, so two nodes can never
 * both take the last unit. Keys expire a little after their window, so idle counters cost nothing.
 *
 * Returns {1, slot, used1, releases1, …} when admitted, {0, refusedIndex, retryAtMs, used1, releases1, …}
 * when not (of the counters without room, the one that frees up last: the request is refused until then) (releases = epoch ms when the oldest usage leaves the window, -1 when nothing is used; the same
 * rule as oldestUsageExpiresAt in rate-window.ts).
 */
const CHARGE = `
local now = tonumber(ARGV[1])
local slotMs = tonumber(ARGV[2])
local windowSlots = tonumber(ARGV[3])
local slot = math.floor(now / slotMs)
local oldest = slot - windowSlots + 1
local n = #KEYS
local used, live = {}, {}
for i = 1, n do
  local flat = redis.call('HGETALL', KEYS[i])
  local sum, slots = 0, {}
  for j = 1, #flat, 2 do
    local at = tonumber(flat[j])
    local amount = tonumber(flat[j + 1])
    if at < oldest then
      redis.call('HDEL', KEYS[i], flat[j])
    else
      sum = sum + amount
      slots[#slots + 1] = { at, amount }
    end
  end
  table.sort(slots, function(a, b) return a[1] < b[1] end)
  used[i], live[i] = sum, slots
end
local function readings(out, extra)
  for i = 1, n do
    local cost = extra and tonumber(ARGV[3 + 2 * i]) or 0
    local u = used[i] + cost
    -- The oldest slot that holds usage (one settled down to zero holds none), else this request's own slot.
    local releases = -1
    for _, entry in ipairs(live[i]) do
      if entry[2] > 0 then releases = (entry[1] + windowSlots) * slotMs break end
    end
    if releases < 0 and cost > 0 then releases = (slot + windowSlots) * slotMs end
    out[#out + 1] = u
    out[#out + 1] = releases
  end
  return out
end
local refused, retryAt = -1, -1
for i = 1, n do
  local limit = tonumber(ARGV[2 + 2 * i])
  local cost = tonumber(ARGV[3 + 2 * i])
  if cost > 0 and used[i] + cost > limit then
    local need, freed, at = used[i] + cost - limit, 0, now + windowSlots * slotMs
    for _, entry in ipairs(live[i]) do
      freed = freed + entry[2]
      if freed >= need then at = (entry[1] + windowSlots) * slotMs break end
    end
    if at > retryAt then refused, retryAt = i - 1, at end
  end
end
if refused >= 0 then return readings({ 0, refused, retryAt }, false) end
for i = 1, n do
  local cost = tonumber(ARGV[3 + 2 * i])
  if cost > 0 then
    redis.call('HINCRBY', KEYS[i], slot, cost)
    redis.call('PEXPIRE', KEYS[i], (windowSlots + 2) * slotMs)
  end
end
return readings({ 1, slot, 0 }, true)
`;

/** Corrects one slot of each counter, never below zero; a slot that already left the window is left alone. */
const ADJUST = `
local slot = ARGV[1]
for i = 1, #KEYS do
  if redis.call('HEXISTS', KEYS[i], slot) == 1 then
    local value = redis.call('HINCRBY', KEYS[i], slot, tonumber(ARGV[i + 1]))
    if value < 0 then redis.call('HSET', KEYS[i], slot, 0) end
  end
end
return 1
`;

type Scripted = Redis & {
  switchyardRateCharge(...args: Array<string | number>): Promise<number[]>;
  switchyardRateAdjust(...args: Array<string | number>): Promise<number>;
};

export class RedisWindowStore implements WindowStore {
  private readonly redis: Scripted;

  constructor(
    redis: Redis,
    /** Prefix of every key, so several deployments of Switchyard (or tests) can share one Redis. */
    private readonly prefix: string,
  ) {
    redis.defineCommand('switchyardRateCharge', { lua: CHARGE });
    redis.defineCommand('switchyardRateAdjust', { lua: ADJUST });
    this.redis = redis as Scripted;
  }

  async charge(charges: readonly CounterCharge[], nowMs: number): Promise<WindowDecision> {
    const args: Array<string | number> = [charges.length, ...charges.map((c) => this.prefix + c.key), nowMs, SLOT_MS, WINDOW_SLOTS];
    for (const charge of charges) args.push(charge.limit, charge.cost);
    const reply = await this.redis.switchyardRateCharge(...args);
    const readings = charges.map((_, i) => {
      const releases = Number(reply[4 + 2 * i]);
      return { used: Number(reply[3 + 2 * i]), releasesAt: releases < 0 ? null : releases };
    });
    return Number(reply[0]) === 1
      ? { admitted: true, slot: Number(reply[1]), readings }
      : { admitted: false, refused: Number(reply[1]), retryAtMs: Number(reply[2]), readings };
  }

  async adjust(slot: number, deltas: ReadonlyArray<{ key: string; delta: number }>, nowMs: number): Promise<void> {
    const changed = deltas.filter((d) => d.delta !== 0);
    if (changed.length === 0 || slot < slotOf(nowMs) - WINDOW_SLOTS + 1) return;
    await this.redis.switchyardRateAdjust(changed.length, ...changed.map((d) => this.prefix + d.key), slot, ...changed.map((d) => d.delta));
  }
}

export { WINDOW_MS };
