/**
 * The sliding window every rate limit is counted in: one minute, kept as one-second slots. A counter's
 * usage is the sum of its slots younger than the window, so within any window of 60 whole seconds at
 * most `limit` is admitted (the window is exact to the slot: a burst may take the whole minute's limit
 * at once, never more). The same arithmetic runs in Redis (Lua) and in process.
 */
export const WINDOW_MS = 60_000;
export const SLOT_MS = 1_000;
export const WINDOW_SLOTS = WINDOW_MS / SLOT_MS;

export const slotOf = (nowMs: number): number => Math.floor(nowMs / SLOT_MS);

/** The oldest slot still inside the window that ends in `slot`. */
export const oldestLiveSlot = (slot: number): number => slot - WINDOW_SLOTS + 1;

/** When a slot's usage leaves the window (epoch ms). */
export const slotExpiresAt = (slot: number): number => (slot + WINDOW_SLOTS) * SLOT_MS;

/** One counter a request is charged to: `cost` units against `limit` per window. */
export interface CounterCharge {
  /** Store key, e.g. `key:acme-app:requests`. */
  key: string;
  limit: number;
  cost: number;
}

/** A counter after a decision: what is used in the window now, and when its oldest usage expires. */
export interface CounterReading {
  used: number;
  /**
   * Epoch ms when the oldest usage leaves the window (capacity starts to return); null = nothing used. A
   * slot settled down to zero (a request refused later in admission, or that used nothing) holds no usage.
   */
  releasesAt: number | null;
}

export type WindowDecision =
  | { admitted: true; slot: number; readings: CounterReading[] }
  /** `refused`: of the counters without room, the one that frees up last (at `retryAtMs`): the request fits no earlier. */
  | { admitted: false; refused: number; retryAtMs: number; readings: CounterReading[] };

/** Where counters live: Redis (shared by every node) or this process. */
export interface WindowStore {
  /** Charges every counter, or none when one would exceed its limit (atomically). */
  charge(charges: readonly CounterCharge[], nowMs: number): Promise<WindowDecision>;
  /** Corrects what `slot` was charged (actual usage at settlement); never below zero; expired slots are left alone. */
  adjust(slot: number, deltas: ReadonlyArray<{ key: string; delta: number }>, nowMs: number): Promise<void>;
}

/**
 * The earliest moment `need` units have left the window, given its live slots (ascending). The decision
 * rule shared by both stores.
 */
export function retryAt(slots: ReadonlyArray<readonly [number, number]>, need: number, nowMs: number): number {
  let freed = 0;
  for (const [slot, amount] of slots) {
    freed += amount;
    if (freed >= need) return slotExpiresAt(slot);
  }
  return nowMs + WINDOW_MS;
}

/**
 * When the oldest usage among a counter's live slots (ascending) leaves the window: the first slot that
 * holds anything, so that a slot settled down to zero never stands for capacity about to return (`retryAt`
 * skips it the same way). Null when nothing is used.
 */
export function oldestUsageExpiresAt(slots: ReadonlyArray<readonly [number, number]>): number | null {
  for (const [slot, amount] of slots) if (amount > 0) return slotExpiresAt(slot);
  return null;
}
