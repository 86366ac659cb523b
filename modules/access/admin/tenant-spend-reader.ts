import { Injectable } from '@nestjs/common';
import { Decimal } from 'decimal.js';
import { DataSource, In } from 'typeorm';
import { periodStart, type SpendPeriod, TenantSpend } from '../../../projections/tenant-spend/index.js';

export interface PeriodSpend {
  periodStart: string;
  spentUsd: string;
  /** What exact-cache hits saved in the period. */
  savedUsd: string;
}

export type CurrentSpend = Record<SpendPeriod, PeriodSpend>;

/** Current-day and current-month spend of the tenants asked for, from the `tenant_spend` read model. */
@Injectable()
export class TenantSpendReader {
  constructor(private readonly dataSource: DataSource) {}

  async current(tenantIds: readonly string[], now: Date = new Date()): Promise<Map<string, CurrentSpend>> {
    const day = periodStart('day', now);
    const month = periodStart('month', now);
    const result = new Map<string, CurrentSpend>();
    for (const id of tenantIds) {
      result.set(id, { day: { periodStart: day.toISOString(), spentUsd: '0', savedUsd: '0' }, month: { periodStart: month.toISOString(), spentUsd: '0', savedUsd: '0' } });
    }
    if (tenantIds.length === 0) return result;
    // The rows of these tenants only: a page of 50 tenants reads 100 rows, however many tenants there are.
    const tenantId = In([...tenantIds]);
    const rows = await this.dataSource.getRepository(TenantSpend).find({
      where: [{ period: 'day', periodStart: day, tenantId }, { period: 'month', periodStart: month, tenantId }],
    });
    for (const row of rows) {
      const spend = result.get(row.tenantId);
      if (!spend) continue;
      spend[row.period].spentUsd = new Decimal(row.spentUsd).toFixed();
      spend[row.period].savedUsd = new Decimal(row.savedUsd).toFixed();
    }
    return result;
  }
}
