import { Decimal } from 'decimal.js';
import type { SqlExecutor } from '../../../src/kernel/index.js';

export type SpendPeriodName = 'day' | 'month';

export interface PeriodSpendRow {
  periodStart: string;
  spentUsd: string;
}

/**
 * Spend by period for one tenant (from `tenant_spend`) or one key (summed from `cost_ledger`), oldest
 * first, exact decimals. `from` is inclusive, `to` exclusive; both default to the last twelve periods.
 */
export class SpendHistory {
  constructor(private readonly sql: SqlExecutor) {}

  async of(kind: 'tenant' | 'key', id: string, period: SpendPeriodName, from: Date | null, to: Date | null, now = new Date()): Promise<PeriodSpendRow[]> {
    const end = to ?? new Date(now.getTime() + 1);
    const start = from ?? (period === 'day'
      ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - 11))
      : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 11, 1)));
    const rows = kind === 'tenant'
      ? await this.sql.query<{ period_start: Date | string; spent: string }>(
        `SELECT period_start, spent_usd::text AS spent FROM tenant_spend
         WHERE tenant_id = $1 AND period = $2 AND period_start >= date_trunc($2, $3::timestamptz, 'UTC') AND period_start < $4
         ORDER BY period_start`,
        [id, period, start.toISOString(), end.toISOString()],
      )
      : await this.sql.query<{ period_start: Date | string; spent: string }>(
        `SELECT date_trunc($2, recorded_at, 'UTC') AS period_start, sum(cost_usd)::text AS spent FROM cost_ledger
         WHERE key_id = $1 AND recorded_at >= date_trunc($2, $3::timestamptz, 'UTC') AND recorded_at < $4
         GROUP BY 1 ORDER BY 1`,
        [id, period, start.toISOString(), end.toISOString()],
      );
    return rows.map((row) => ({ periodStart: new Date(row.period_start).toISOString(), spentUsd: new Decimal(row.spent).toFixed() }));
  }
}
