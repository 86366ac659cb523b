import {
  type CounterCharge, type CounterReading, type WindowDecision, type WindowStore, oldestLiveSlot, oldestUsageExpiresAt, retryAt, slotOf,
} from './rate-window.js';

/**
 * Counters in this process: the store without Redis, and every node's fallback while Redis is away
 * (then each node counts on its own). Same window arithmetic as the Redis script. Counters whose window
 * emptied are dropped, so memory follows the callers active in the last minute.
 */
export class LocalWindowStore implements WindowStore {
  private readonly counters = new Map<string, Map<number, number>>();
  private sweptAt = 0;

  async charge(charges: readonly CounterCharge[], nowMs: number): Promise<WindowDecision> {
    return this.chargeNow(charges, nowMs);
  }

  chargeNow(charges: readonly CounterCharge[], nowMs: number): WindowDecision {
    const slot = slotOf(nowMs);
    this.sweep(slot);
    const live = charges.map((charge) => this.live(charge.key, slot));
    const used = live.map((slots) => slots.reduce((sum, [, amount]) => sum + amount, 0));
    // Of the counters with no room, the one that frees up last: before then the request is refused anyway.
    let refused: { index: number; retryAtMs: number } | null = null;
    for (const [index, charge] of charges.entries()) {
      if (charge.cost > 0 && used[index] + charge.cost > charge.limit) {
        const at = retryAt(live[index], used[index] + charge.cost - charge.limit, nowMs);
        if (!refused || at > refused.retryAtMs) refused = { index, retryAtMs: at };
      }
    }
    if (refused) return { admitted: false, refused: refused.index, retryAtMs: refused.retryAtMs, readings: live.map((slots, i) => reading(used[i], slots)) };
    const readings: CounterReading[] = [];
    for (const [index, charge] of charges.entries()) {
      if (charge.cost > 0) {
        const slots = this.counter(charge.key);
        slots.set(slot, (slots.get(slot) ?? 0) + charge.cost);
        const newest = live[index].at(-1);
        if (newest && newest[0] === slot) newest[1] += charge.cost;
        else live[index].push([slot, charge.cost]);
      }
      readings.push(reading(used[index] + charge.cost, live[index]));
    }
    return { admitted: true, slot, readings };
  }

  async adjust(slot: number, deltas: ReadonlyArray<{ key: string; delta: number }>, nowMs: number): Promise<void> {
    if (slot < oldestLiveSlot(slotOf(nowMs))) return;
    for (const { key, delta } of deltas) {
      const slots = this.counters.get(key);
      const current = slots?.get(slot);
      if (slots && current !== undefined) slots.set(slot, Math.max(0, current + delta));
    }
  }

  private live(key: string, slot: number): Array<[number, number]> {
    const slots = this.counters.get(key);
    if (!slots) return [];
    const oldest = oldestLiveSlot(slot);
    const live: Array<[number, number]> = [];
    for (const [at, amount] of slots) {
      if (at < oldest) slots.delete(at);
      else live.push([at, amount]);
    }
    return live.sort((a, b) => a[0] - b[0]);
  }

  private counter(key: string): Map<number, number> {
    let slots = this.counters.get(key);
    if (!slots) this.counters.set(key, (slots = new Map()));
    return slots;
  }

  /** At most once a window: drop counters with nothing left in it. */
  private sweep(slot: number): void {
    if (slot - this.sweptAt < 60) return;
    this.sweptAt = slot;
    const oldest = oldestLiveSlot(slot);
    for (const [key, slots] of this.counters) {
      for (const at of slots.keys()) if (at < oldest) slots.delete(at);
      if (slots.size === 0) this.counters.delete(key);
    }
  }
}

function reading(used: number, live: ReadonlyArray<readonly [number, number]>): CounterReading {
  return { used, releasesAt: oldestUsageExpiresAt(live) };
}
