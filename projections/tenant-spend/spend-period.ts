import type { SpendPeriod } from './tenant-spend.entity.js';

/** UTC start of the day or month that `at` falls in: the period keys of `tenant_spend`. */
export function periodStart(period: SpendPeriod, at: Date): Date {
  return period === 'day'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}
