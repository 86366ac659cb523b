/** The UTC calendar periods budgets are counted in (the periods of `tenant_spend`). */
export type BudgetPeriod = 'day' | 'month';

export function periodStartOf(period: BudgetPeriod, at: Date): Date {
  return period === 'day'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/** When the period that `at` falls in ends: the budget's reset time. */
export function periodEndOf(period: BudgetPeriod, at: Date): Date {
  return period === 'day'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/** `month:2026-12` or `day:2026-12-01`: the period named in BudgetThresholdCrossed and in counter keys. */
export function periodId(period: BudgetPeriod, at: Date): string {
  const iso = periodStartOf(period, at).toISOString();
  return `${period}:${period === 'day' ? iso.slice(0, 10) : iso.slice(0, 7)}`;
}
