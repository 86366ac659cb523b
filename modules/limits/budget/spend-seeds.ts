import { Decimal } from 'decimal.js';
import type { SqlExecutor } from '../../../src/kernel/index.js';
import { type BudgetPeriod, periodEndOf, periodStartOf } from './budget-period.js';

/** Nano-USD, rounded up: a budget counter never shows less than was spent. */
export function toNanoUsd(usd: Decimal.Value): number {
  return new Decimal(usd).times(1e9).ceil().toNumber();
}

export function fromNanoUsd(nano: number): string {
  return new Decimal(nano).div(1e9).toFixed();
}

/**
 * What a scope has already spent in a period, from the ledger's read models: where a budget counter
 * starts when it does not exist yet (first use in a period, a node without Redis, or a Redis that lost
 * its data). Read only then, never per request.
 */
export class SpendSeeds {
  constructor(private readonly sql: SqlExecutor) {}

  async spentNano(kind: 'tenant' | 'key', id: string, period: BudgetPeriod, at: Date): Promise<number> {
    const start = periodStartOf(period, at);
    const rows = kind === 'tenant'
      ? await this.sql.query<{ spent: string | null }>(
        'SELECT spent_usd::text AS spent FROM tenant_spend WHERE tenant_id = $1 AND period = $2 AND period_start = $3',
        [id, period, start.toISOString()],
      )
      : await this.sql.query<{ spent: string | null }>(
        'SELECT coalesce(sum(cost_usd), 0)::text AS spent FROM cost_ledger WHERE key_id = $1 AND recorded_at >= $2 AND recorded_at < $3',
        [id, start.toISOString(), periodEndOf(period, at).toISOString()],
      );
    return toNanoUsd(rows[0]?.spent ?? '0');
  }

  /** What one request was billed (its ledger rows): how an expired reservation of a node that died is reconciled. */
  async billedNano(requestId: string): Promise<number> {
    const rows = await this.sql.query<{ billed: string }>(
      'SELECT coalesce(sum(cost_usd), 0)::text AS billed FROM cost_ledger WHERE request_id = $1', [requestId]);
    return toNanoUsd(rows[0]?.billed ?? '0');
  }
}
