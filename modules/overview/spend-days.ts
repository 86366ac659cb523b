import { Decimal } from 'decimal.js';
import type { Database } from '../../src/kernel/index.js';

/**
 * Spend of the whole installation today and yesterday (UTC days), from `tenant_spend`'s day rows: one row
 * per tenant and day, so the read is as large as the number of tenants, never the ledger's.
 */
export async function spendDays(database: Database, now: Date): Promise<{ todayUsd: string; yesterdayUsd: string }> {
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const yesterday = new Date(today.getTime() - 86_400_000);
  const rows = await database.query<{ day: string; spent: string }>(
    `SELECT to_char(period_start AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, sum(spent_usd)::text AS spent
     FROM tenant_spend WHERE period = 'day' AND period_start IN ($1::timestamptz, $2::timestamptz) GROUP BY 1`,
    [today.toISOString(), yesterday.toISOString()],
  );
  const of = (day: Date) => new Decimal(rows.find((row) => row.day === day.toISOString().slice(0, 10))?.spent ?? 0).toFixed(6);
  return { todayUsd: of(today), yesterdayUsd: of(yesterday) };
}
