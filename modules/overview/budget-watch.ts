import { Decimal } from 'decimal.js';
import type { TenantState } from '../../events/index.js';
import type { Database } from '../../src/kernel/index.js';

export interface BudgetAlert {
  tenantId: string;
  period: 'day' | 'month';
  spentUsd: string;
  limitUsd: string;
  /** spent / limit, 4 decimals: 1 or more is at or over the budget. */
  ratio: number;
}

/**
 * The tenants whose spend in the current UTC day or month has reached their budget's alert threshold
 * (`softPct`, the percentage at which BudgetThresholdCrossed is recorded), fullest first. Spend comes from
 * `tenant_spend`'s current rows (one per tenant and period), budgets from the control plane in memory.
 */
export async function budgetAlerts(database: Database, tenants: ReadonlyMap<string, TenantState>, now: Date): Promise<BudgetAlert[]> {
  const budgeted = [...tenants].filter(([, tenant]) => tenant.status !== 'absent' && tenant.budget !== null);
  if (budgeted.length === 0) return [];
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const rows = await database.query<{ tenant_id: string; period: 'day' | 'month'; spent: string }>(
    `SELECT tenant_id, period, spent_usd::text AS spent FROM tenant_spend
     WHERE (period = 'day' AND period_start = $1::timestamptz) OR (period = 'month' AND period_start = $2::timestamptz)`,
    [day.toISOString(), month.toISOString()],
  );
  const spent = new Map(rows.map((row) => [`${row.tenant_id}#${row.period}`, new Decimal(row.spent)]));
  const alerts: BudgetAlert[] = [];
  for (const [tenantId, tenant] of budgeted) {
    if (tenant.status === 'absent' || !tenant.budget) continue;
    const threshold = new Decimal(tenant.budget.softPct).div(100);
    const limits: Array<['day' | 'month', string | undefined]> = [['day', tenant.budget.dailyUsd], ['month', tenant.budget.monthlyUsd]];
    for (const [period, limit] of limits) {
      if (limit === undefined || new Decimal(limit).lte(0)) continue;
      const amount = spent.get(`${tenantId}#${period}`) ?? new Decimal(0);
      const ratio = amount.div(limit);
      if (ratio.lt(threshold)) continue;
      alerts.push({ tenantId, period, spentUsd: amount.toFixed(6), limitUsd: new Decimal(limit).toFixed(), ratio: ratio.toDecimalPlaces(4).toNumber() });
    }
  }
  return alerts.sort((a, b) => b.ratio - a.ratio || a.tenantId.localeCompare(b.tenantId));
}
