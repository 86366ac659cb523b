import { randomUUID } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import type { TenantBudget } from '../../../events/index.js';
import type { LimitsRedis } from '../limits-redis.js';
import { type BudgetPeriod, periodEndOf, periodId } from './budget-period.js';
import { type CostBasis, budgetRefusal } from './budget-refusal.js';
import { type BudgetCounter, type BudgetHold, type BudgetStore, type ExpiredHold, LocalBudgetStore, type SettledChange } from './budget-store.js';
import { RedisBudgetStore } from './redis-budget-store.js';
import { type SpendSeeds, fromNanoUsd, toNanoUsd } from './spend-seeds.js';

/** A budget a request counts against: its tenant's, or its key's own. */
export interface BudgetScope {
  kind: 'tenant' | 'key';
  id: string;
  tenantId: string;
  budget: TenantBudget;
}

/** A threshold reached by settled spend: recorded once per period (BudgetThresholdCrossed). */
export interface ThresholdCrossing {
  scope: BudgetScope;
  /** `month:2026-12` */
  period: string;
  pct: number;
  spentUsd: string;
  budgetUsd: string;
}

export interface BudgetReservation {
  /** Replaces the reservation by what the request actually cost (USD decimal string); once. */
  settle(actualUsd: string): void;
  cancel(): void;
}

const NOTHING: BudgetReservation = Object.freeze({ settle: () => undefined, cancel: () => undefined });
/** Counters outlive their period by a day, so a late settlement still finds its counter. */
const KEEP_AFTER_PERIOD_S = 86_400;

export interface ReserveOptions {
  /** false counts the reservation without refusing (an alias's budget downgrade). */
  enforce?: boolean;
  /**
   * The longest the request may live: past it, a shared store takes the reservation out (its node died
   * before settling) and it is replaced by what the request was billed, as a settlement would have.
   * Always the caller's: only it knows the request's deadlines (concurrencyLeaseMs of its settings).
   */
  holdMs: number;
  /** Names the hold (a random id when absent). */
  requestId?: string;
  /** What the reservation is made of, for a refusal to explain it. */
  basis?: CostBasis;
}

interface PeriodCounter extends BudgetCounter {
  scope: BudgetScope;
  period: BudgetPeriod;
  periodId: string;
  amountUsd: string;
  resetsAt: Date;
}

/**
 * Budgets with in-flight reservations (DESIGN §7): admission reserves the request's maximum cost (its
 * estimate × the highest price among its routes) in every budget of the request — tenant and key, month
 * and day — and refuses with 402 when a hard budget would be passed; settlement replaces the
 * reservation by the actual cost. Counters live in Redis when it is configured (shared by every node,
 * so concurrent requests on any node see each other's reservations), in process otherwise and while
 * Redis is away. Spend overshoots a hard budget only by what a request costs beyond its reservation.
 */
export class BudgetGuard {
  private readonly local: LocalBudgetStore;
  private readonly shared: RedisBudgetStore | null;

  constructor(
    private readonly redis: LimitsRedis,
    private readonly seeds: SpendSeeds,
    private readonly onCrossing: (crossing: ThresholdCrossing) => void,
    private readonly clock: () => number = Date.now,
  ) {
    this.local = new LocalBudgetStore(clock);
    this.shared = redis.client ? new RedisBudgetStore(redis.client, `${redis.keyTag}budget:`) : null;
  }

  async reserve(scopes: readonly BudgetScope[], maxCostUsd: Decimal.Value, options: ReserveOptions): Promise<BudgetReservation> {
    const at = new Date(this.clock());
    const enforce = options.enforce ?? true;
    // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
    const counters = scopes.flatMap((scope) => periodCounters(scope, at)).map((c) => (enforce ? c : { ...c, limit: null }));
    if (counters.length === 0) return NOTHING;
    const cost = toNanoUsd(maxCostUsd);
    let store: BudgetStore = this.shared && this.redis.usable() ? this.shared : this.local;
    const hold: BudgetHold = { requestId: options.requestId ?? randomUUID(), nowMs: at.getTime(), untilMs: at.getTime() + options.holdMs };
    let decision;
    let seeded = false;
    let reconciled = false;
    for (;;) {
      try {
        decision = await store.reserve(counters, cost, hold);
        if (store === this.shared) this.redis.succeeded();
      } catch (error) {
        this.redis.failed((error as Error).message);
        store = this.local;
        decision = this.local.reserveNow(counters, cost);
      }
      if (decision.expired?.length) {
        const done = this.reconcile(store, counters, decision.expired);
        // The refusal may be the dead node's reservations: ask again once they are what their requests cost.
        if (decision.kind === 'refused' && !reconciled) {
          reconciled = true;
          await done;
          continue;
        }
      }
      if (decision.kind !== 'needs_seed' || seeded) break;
      seeded = true;
      // First use of these counters in this period (or Redis lost them): start from the ledger's spend.
      await Promise.all(counters.map(async (c) => (c.seed = await this.seeds.spentNano(c.scope.kind, c.scope.id, c.period, at))));
    }
    if (decision.kind === 'needs_seed') throw new Error('budget counters could not be seeded');
    if (decision.kind === 'refused') {
      const counter = counters[decision.refused];
      throw budgetRefusal({
        kind: counter.scope.kind, id: counter.scope.id, period: counter.period, amountUsd: counter.amountUsd, resetsAt: counter.resetsAt,
        committedNano: decision.committed, settledNano: decision.settled, costNano: cost,
      }, options.basis ?? null, at);
    }
    let open = true;
    const finish = (actual: number) => {
      if (!open) return;
      open = false;
      const keys = counters.map((c) => c.key);
      store.settle(keys, hold, cost, actual).then((changes) => this.crossings(counters, changes), () => undefined);
    };
    return { settle: (actualUsd) => finish(toNanoUsd(actualUsd)), cancel: () => finish(0) };
  }

  /** Settles the expired holds of requests whose node died: their reservation becomes what the ledger billed them. */
  private async reconcile(store: BudgetStore, counters: readonly PeriodCounter[], expired: readonly ExpiredHold[]): Promise<void> {
    await Promise.all(expired.map(async (hold) => {
      const counter = counters[hold.counter];
      try {
        const changes = await store.settle([counter.key], null, hold.reserved, await this.seeds.billedNano(hold.requestId));
        this.crossings([counter], changes);
      } catch {
        // Taken out but not reconciled (the database or Redis failed): the reservation stays counted, on the safe side.
      }
    }));
  }

  private crossings(counters: readonly PeriodCounter[], changes: readonly SettledChange[]): void {
    for (const [i, change] of changes.entries()) {
      if (!change) continue;
      const counter = counters[i];
      const amount = toNanoUsd(counter.amountUsd);
      for (const pct of new Set([counter.scope.budget.softPct, 100])) {
        const threshold = Math.ceil((amount * pct) / 100);
        if (change.before < threshold && change.after >= threshold) {
          this.onCrossing({ scope: counter.scope, period: counter.periodId, pct, spentUsd: fromNanoUsd(change.after), budgetUsd: counter.amountUsd });
        }
      }
    }
  }
}

function periodCounters(scope: BudgetScope, at: Date): PeriodCounter[] {
  const counters: PeriodCounter[] = [];
  for (const [period, amount] of [['month', scope.budget.monthlyUsd], ['day', scope.budget.dailyUsd]] as const) {
    if (!amount) continue;
    const id = periodId(period, at);
    const resetsAt = periodEndOf(period, at);
    counters.push({
      key: `${scope.kind}:${scope.id}:${id}`,
      limit: scope.budget.enforcement === 'hard' ? toNanoUsd(amount) : null,
      seed: null,
      ttlSeconds: Math.ceil((resetsAt.getTime() - at.getTime()) / 1000) + KEEP_AFTER_PERIOD_S,
      scope, period, periodId: id, amountUsd: amount, resetsAt,
    });
  }
  return counters;
}
