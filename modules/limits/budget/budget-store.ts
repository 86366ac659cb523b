/**
 * Budget counters in nano-USD (integers: exact, and far inside 2^53 for any real budget), so that no
 * amount ever passes through binary floating point. Each counter is a pair: `committed` (settled spend
 * plus the reservations of requests in flight — what admission checks) and `settled` (spend only —
 * what thresholds are measured on).
 */
export interface BudgetCounter {
  /** e.g. `tenant:acme:month:2026-12`. */
  key: string;
  /** Hard limit in nano-USD; null = never refuse (soft budgets). */
  limit: number | null;
  /** Spend already recorded for the period (from the ledger), used when the counter does not exist yet. */
  seed: number | null;
  /** Seconds the counter is kept (past the period's end). */
  ttlSeconds: number;
}

export type BudgetDecision = (
  | { kind: 'reserved'; committed: number[] }
  /** `committed` and `settled` of the counter that refused (nano-USD), for the refusal to say what is spent and what reserved. */
  | { kind: 'refused'; refused: number; committed: number; settled: number }
  /** A counter does not exist and no seed was given: read the period's spend and ask again. */
  | { kind: 'needs_seed'; missing: number }
) & { expired?: ExpiredHold[] };

/** Settled spend before and after a settlement, per counter (null when the counter was lost, e.g. Redis restarted). */
export type SettledChange = { before: number; after: number } | null;

/**
 * One request's reservation, named by its request: a shared store keeps it until `untilMs` (the longest
 * the request may live), after which it is reconciled with what the request was billed — its node died
 * before settling it.
 */
export interface BudgetHold {
  requestId: string;
  nowMs: number;
  untilMs: number;
}

/** A hold taken out of counter `counter` (its index in the reservation) after it expired. */
export interface ExpiredHold {
  counter: number;
  reserved: number;
  requestId: string;
}

export interface BudgetStore {
  /** Adds `cost` to every counter's committed amount, or to none when one would pass its limit. */
  reserve(counters: readonly BudgetCounter[], cost: number, hold: BudgetHold): Promise<BudgetDecision>;
  /**
   * Replaces a reservation by the actual cost: committed += actual − reserved, settled += actual — unless
   * its hold is no longer there (it expired and was reconciled). `hold` null: an expired hold, taken out.
   */
  settle(keys: readonly string[], hold: BudgetHold | null, reserved: number, actual: number): Promise<SettledChange[]>;
}

/** The in-process counters: without Redis, and while Redis is away (their reservations die with the process, so holds never expire here). */
export class LocalBudgetStore implements BudgetStore {
  private readonly counters = new Map<string, { committed: number; settled: number; expiresAt: number }>();

  constructor(private readonly clock: () => number = Date.now) {}

  async reserve(counters: readonly BudgetCounter[], cost: number): Promise<BudgetDecision> {
    return this.reserveNow(counters, cost);
  }

  reserveNow(counters: readonly BudgetCounter[], cost: number): BudgetDecision {
    const now = this.clock();
    for (const [i, counter] of counters.entries()) {
      const existing = this.counters.get(counter.key);
      if (existing && existing.expiresAt <= now) this.counters.delete(counter.key);
      if (!this.counters.has(counter.key)) {
        if (counter.seed === null) return { kind: 'needs_seed', missing: i };
        this.counters.set(counter.key, { committed: counter.seed, settled: counter.seed, expiresAt: now + counter.ttlSeconds * 1000 });
      }
    }
    const committed = counters.map((c) => this.counters.get(c.key)!.committed);
    for (const [i, counter] of counters.entries()) {
      if (counter.limit !== null && committed[i] + cost > counter.limit) {
        return { kind: 'refused', refused: i, committed: committed[i], settled: this.counters.get(counter.key)!.settled };
      }
    }
    for (const counter of counters) this.counters.get(counter.key)!.committed += cost;
    return { kind: 'reserved', committed: committed.map((c) => c + cost) };
  }

  async settle(keys: readonly string[], _hold: BudgetHold | null, reserved: number, actual: number): Promise<SettledChange[]> {
    return keys.map((key) => {
      const counter = this.counters.get(key);
      if (!counter) return null;
      counter.committed = Math.max(0, counter.committed + actual - reserved);
      const before = counter.settled;
      counter.settled += actual;
      return { before, after: counter.settled };
    });
  }
}
