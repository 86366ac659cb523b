import { Decimal } from 'decimal.js';
import { type ClickHouseConnection, dateTime, quoteString } from '../../projections/clickhouse-analytics/index.js';
import { SPEND_DIMENSIONS, type SpendMetrics, type SpendQuery, type SpendResult, type SpendRow, type SpendSource, sortRows } from './spend-query.js';

interface MetricRow {
  m_requests: string;
  m_attempts: string;
  m_input: string;
  m_cached: string;
  m_cache_write: string;
  m_output: string;
  m_reasoning: string;
  m_cost: string;
}

interface SavingRow {
  m_hits: string;
  m_saved: string;
}

/**
 * Billable attempts only, to match the ledger row for row. The rollups hold both counts: the billable
 * ones and every attempt (errors, latency quantiles) for finance's own queries. Result names differ from
 * every column: ClickHouse 18.16 resolves aliases first, and `sum(x) AS x` read elsewhere would recurse.
 */
const METRICS = `toString(uniqExactIfMerge(billable_requests)) AS m_requests, toString(sum(billable_attempts)) AS m_attempts,
  toString(sum(input_tokens)) AS m_input, toString(sum(cached_input_tokens)) AS m_cached,
  toString(sum(cache_write_tokens)) AS m_cache_write, toString(sum(output_tokens)) AS m_output,
  toString(sum(reasoning_tokens)) AS m_reasoning, toString(sum(cost_usd)) AS m_cost`;

/** Exact-cache hits and their saving, from the cache_savings rollups. */
const SAVINGS = `toString(sum(cache_hits)) AS m_hits, toString(sum(saved_usd)) AS m_saved`;

/**
 * Spend from the spend_hourly / spend_daily rollups, and cache hits from cache_savings_hourly /
 * cache_savings_daily (same buckets and dimensions), joined here by period and group (parts merge in the
 * background, hence GROUP BY).
 */
export class ClickHouseSpendSource implements SpendSource {
  readonly name = 'clickhouse' as const;

  constructor(private readonly clickhouse: ClickHouseConnection) {}

  async report(query: SpendQuery): Promise<SpendResult> {
    const hourly = query.granularity === 'hour';
    const spendTable = this.clickhouse.table(hourly ? 'spend_hourly' : 'spend_daily');
    const savingsTable = this.clickhouse.table(hourly ? 'cache_savings_hourly' : 'cache_savings_daily');
    const bucket = hourly ? 'hour' : 'day';
    // Weeks and months are sums of daily buckets; `toMonday` starts ISO weeks as PostgreSQL's date_trunc does.
    const periodOf = { hour: 'hour', day: 'day', week: 'toMonday(day)', month: 'toStartOfMonth(day)' }[query.granularity];
    const bound = (at: Date) => (hourly ? `toDateTime(${quoteString(dateTime(at))}, 'UTC')` : `toDate(${quoteString(at.toISOString().slice(0, 10))})`);
    let where = `${bucket} >= ${bound(query.from)} AND ${bucket} < ${bound(query.to)}`;
    for (const [dimension, value] of Object.entries(query.filters)) {
      where += ` AND ${SPEND_DIMENSIONS[dimension as keyof typeof SPEND_DIMENSIONS]} = ${quoteString(value!)}`;
    }
    const columns = query.groupBy.map((dimension) => SPEND_DIMENSIONS[dimension]);
    const grouped = `SELECT toString(${periodOf}) AS m_period${columns.map((c) => `, ${c}`).join('')}`;
    // Group keys are strings and the bucket; never a Decimal column (ClickHouse 18.16 crashes on that).
    // Groups of unbilled attempts only have no ledger rows either.
    const [spent, saved, [spentTotals], [savedTotals]] = await Promise.all([
      this.clickhouse.rows<MetricRow & Record<string, string>>(
        `${grouped}, ${METRICS} FROM ${spendTable} WHERE ${where} GROUP BY ${[periodOf, ...columns].join(', ')} HAVING sum(billable_attempts) > 0`,
      ),
      this.clickhouse.rows<SavingRow & Record<string, string>>(
        `${grouped}, ${SAVINGS} FROM ${savingsTable} WHERE ${where} GROUP BY ${[periodOf, ...columns].join(', ')}`,
      ),
      this.clickhouse.rows<MetricRow>(`SELECT ${METRICS} FROM ${spendTable} WHERE ${where}`),
      this.clickhouse.rows<SavingRow>(`SELECT ${SAVINGS} FROM ${savingsTable} WHERE ${where}`),
    ]);
    const rows = new Map<string, SpendRow>();
    const rowOf = (row: Record<string, string>): SpendRow => {
      const period = hourly ? `${row.m_period.slice(0, 10)}T${row.m_period.slice(11, 13)}:00:00Z` : query.granularity === 'month' ? row.m_period.slice(0, 7) : row.m_period;
      const group = Object.fromEntries(query.groupBy.map((dimension) => [dimension, row[SPEND_DIMENSIONS[dimension]]]));
      const key = JSON.stringify([period, ...query.groupBy.map((dimension) => group[dimension])]);
      let entry = rows.get(key);
      if (!entry) rows.set(key, (entry = { period, group, ...metrics(undefined, undefined) }));
      return entry;
    };
    for (const row of spent) Object.assign(rowOf(row), metrics(row, undefined));
    for (const row of saved) Object.assign(rowOf(row), savings(row));
    return { rows: sortRows([...rows.values()], query.groupBy), totals: metrics(spentTotals, savedTotals) };
  }
}

function metrics(row: MetricRow | undefined, saved: SavingRow | undefined): SpendMetrics {
  const count = (value: string | undefined) => Number(value ?? 0);
  return {
    requests: count(row?.m_requests),
    attempts: count(row?.m_attempts),
    inputTokens: count(row?.m_input),
    cachedInputTokens: count(row?.m_cached),
    cacheWriteTokens: count(row?.m_cache_write),
    outputTokens: count(row?.m_output),
    reasoningTokens: count(row?.m_reasoning),
    costUsd: new Decimal(row?.m_cost ?? 0).toFixed(12),
    ...savings(saved),
  };
}

function savings(row: SavingRow | undefined): Pick<SpendMetrics, 'cacheHits' | 'savedUsd'> {
  return { cacheHits: Number(row?.m_hits ?? 0), savedUsd: new Decimal(row?.m_saved ?? 0).toFixed(12) };
}
