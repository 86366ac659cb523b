import { Decimal } from 'decimal.js';
import type { EntityManager } from 'typeorm';
import { type SpendPeriod, TenantSpend } from './tenant-spend.entity.js';

export interface SpendEntry {
  tenantId: string;
  costUsd: string;
  recordedAt: Date;
}

/** UTC start of the day or month that `at` falls in: the period keys of `tenant_spend`. */
export function periodStart(period: SpendPeriod, at: Date): Date {
  return period === 'day'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/**
 * Adds newly inserted ledger rows to the tenants' running totals, in the caller's transaction. Sums are
 * exact decimals; the increment happens in SQL so concurrent writers could never lose an update.
 */
export async function accrueSpend(manager: EntityManager, entries: readonly SpendEntry[]): Promise<void> {
  const totals = new Map<string, { tenantId: string; period: SpendPeriod; start: Date; amount: Decimal }>();
  for (const entry of entries) {
    for (const period of ['day', 'month'] as const) {
      const start = periodStart(period, entry.recordedAt);
      const key = `${entry.tenantId}\u0000${period}\u0000${start.toISOString()}`;
      const total = totals.get(key) ?? { tenantId: entry.tenantId, period, start, amount: new Decimal(0) };
      total.amount = total.amount.plus(entry.costUsd);
      totals.set(key, total);
    }
  }
  const table = manager.getRepository(TenantSpend).metadata.tableName;
  for (const total of totals.values()) {
    await manager.query(
      `INSERT INTO ${table} (tenant_id, period, period_start, spent_usd) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant_id, period, period_start) DO UPDATE SET spent_usd = ${table}.spent_usd + EXCLUDED.spent_usd`,
      [total.tenantId, total.period, total.start, total.amount.toFixed()],
    );
  }
}
