import { Decimal } from 'decimal.js';
import { type ClickHouseConnection, quoteString } from '../../projections/clickhouse-analytics/clickhouse-connection.js';
import { dateTime } from '../../projections/clickhouse-analytics/attempt-row.js';
import { SPEND_DIMENSIONS, type SpendMetrics, type SpendQuery, type SpendResult, type SpendSource, sortRows } from './spend-query.js';

interface MetricRow {
  requests: string;
  attempts: string;
  input_tokens: string;
  cached_input_tokens: string;
  cache_write_tokens: string;
  output_tokens: string;
  reasoning_tokens: string;
  cost_usd: string;
}

/**
 * Billable attempts only, to match the ledger row for row. The rollups hold both counts: the billable
 * ones and every attempt (errors, latency quantiles) for finance's own queries.
 */
const METRICS = `toString(uniqExactIfMerge(billable_requests)) AS requests, toString(sum(billable_attempts)) AS attempts,
  toString(sum(input_tokens)) AS input_tokens, toString(sum(cached_input_tokens)) AS cached_input_tokens,
  toString(sum(cache_write_tokens)) AS cache_write_tokens, toString(sum(output_tokens)) AS output_tokens,
  toString(sum(reasoning_tokens)) AS reasoning_tokens, toString(sum(cost_usd)) AS cost_usd`;

/** Spend from the spend_hourly / spend_daily rollups (parts merge in the background, hence GROUP BY). */
export class ClickHouseSpendSource implements SpendSource {
  readonly name = 'clickhouse' as const;

  constructor(private readonly clickhouse: ClickHouseConnection) {}

  async report(query: SpendQuery): Promise<SpendResult> {
    const hourly = query.granularity === 'hour';
    const table = this.clickhouse.table(hourly ? 'spend_hourly' : 'spend_daily');
    const bucket = hourly ? 'hour' : 'day';
    const bound = (at: Date) => (hourly ? `toDateTime(${quoteString(dateTime(at))}, 'UTC')` : `toDate(${quoteString(at.toISOString().slice(0, 10))})`);
    let where = `${bucket} >= ${bound(query.from)} AND ${bucket} < ${bound(query.to)}`;
    for (const [dimension, value] of Object.entries(query.filters)) {
      where += ` AND ${SPEND_DIMENSIONS[dimension as keyof typeof SPEND_DIMENSIONS]} = ${quoteString(value!)}`;
    }
    const columns = query.groupBy.map((dimension) => SPEND_DIMENSIONS[dimension]);
    // Group keys are strings and the bucket; never a Decimal column (ClickHouse 18.16 crashes on that).
    // Groups of unbilled attempts only have no ledger rows either.
    const rows = await this.clickhouse.rows<MetricRow & Record<string, string>>(
      `SELECT toString(${bucket}) AS period${columns.map((c) => `, ${c}`).join('')}, ${METRICS}
       FROM ${table} WHERE ${where}
       GROUP BY ${[bucket, ...columns].join(', ')}
       HAVING sum(billable_attempts) > 0`,
    );
    const [totals] = await this.clickhouse.rows<MetricRow>(`SELECT ${METRICS} FROM ${table} WHERE ${where}`);
    return {
      rows: sortRows(rows.map((row) => ({
        period: hourly ? `${row.period.slice(0, 10)}T${row.period.slice(11, 13)}:00:00Z` : row.period,
        group: Object.fromEntries(query.groupBy.map((dimension) => [dimension, row[SPEND_DIMENSIONS[dimension]]])),
        ...metrics(row),
      })), query.groupBy),
      totals: metrics(totals),
    };
  }
}

function metrics(row: MetricRow | undefined): SpendMetrics {
  const count = (value: string | undefined) => Number(value ?? 0);
  return {
    requests: count(row?.requests),
    attempts: count(row?.attempts),
    inputTokens: count(row?.input_tokens),
    cachedInputTokens: count(row?.cached_input_tokens),
    cacheWriteTokens: count(row?.cache_write_tokens),
    outputTokens: count(row?.output_tokens),
    reasoningTokens: count(row?.reasoning_tokens),
    costUsd: new Decimal(row?.cost_usd ?? 0).toFixed(12),
  };
}
