import { Decimal } from 'decimal.js';
import type { SqlExecutor } from '../../src/kernel/index.js';
import { type Granularity, SPEND_DIMENSIONS, type SpendMetrics, type SpendQuery, type SpendResult, type SpendSource, sortRows } from './spend-query.js';

interface MetricRow {
  requests: string;
  attempts: string;
  input_tokens: string | null;
  cached_input_tokens: string | null;
  cache_write_tokens: string | null;
  output_tokens: string | null;
  reasoning_tokens: string | null;
  cost_usd: string | null;
  cache_hits: string;
  saved_usd: string | null;
}

/** Exact-cache hits (attempt 0, zero cost and tokens) are rows of their own: counted apart, never as attempts. */
const METRICS = `count(DISTINCT request_id) FILTER (WHERE outcome <> 'cache_hit')::text AS requests,
  count(*) FILTER (WHERE outcome <> 'cache_hit')::text AS attempts,
  sum(input_tokens)::text AS input_tokens, sum(cached_input_tokens)::text AS cached_input_tokens,
  sum(cache_write_tokens)::text AS cache_write_tokens, sum(output_tokens)::text AS output_tokens,
  sum(reasoning_tokens)::text AS reasoning_tokens, sum(cost_usd)::text AS cost_usd,
  count(*) FILTER (WHERE outcome = 'cache_hit')::text AS cache_hits, sum(saved_usd)::text AS saved_usd`;

/** Period labels; `date_trunc('week', …)` starts ISO weeks on Monday, as ClickHouse's `toMonday` does. */
const PERIOD_FORMAT: Record<Granularity, string> = { hour: 'YYYY-MM-DD"T"HH24:00:00"Z"', day: 'YYYY-MM-DD', week: 'YYYY-MM-DD', month: 'YYYY-MM' };

/** Spend from the `cost_ledger` table (no ClickHouse, or ClickHouse catching up). */
export class PostgresSpendSource implements SpendSource {
  readonly name = 'postgres' as const;

  constructor(private readonly database: SqlExecutor) {}

  async report(query: SpendQuery): Promise<SpendResult> {
    const params: unknown[] = [query.from, query.to];
    let where = `recorded_at >= $1 AND recorded_at < $2`;
    for (const [dimension, value] of Object.entries(query.filters)) {
      params.push(value);
      where += ` AND ${SPEND_DIMENSIONS[dimension as keyof typeof SPEND_DIMENSIONS]} = $${params.length}`;
    }
    // Grouped by the period's start (a timestamp) and labelled once per group: a text label per row sorted
    // by collation cost more than the scan. The totals are the grouping set () of the same scan.
    const bucket = `date_trunc('${query.granularity}', recorded_at AT TIME ZONE 'UTC')`;
    const columns = query.groupBy.map((dimension) => SPEND_DIMENSIONS[dimension]);
    const grouped = await this.database.query<MetricRow & Record<string, string> & { total: number }>(
      `SELECT to_char(g.bucket, '${PERIOD_FORMAT[query.granularity]}') AS period, g.* FROM (
         SELECT ${bucket} AS bucket${columns.map((c) => `, ${c}`).join('')}, ${METRICS}, GROUPING(${bucket}) AS total
         FROM cost_ledger WHERE ${where}
         GROUP BY GROUPING SETS ((${[bucket, ...columns].join(', ')}), ())
       ) g`,
      params,
    );
    const totals = grouped.find((row) => Number(row.total) === 1)!;
    const rows = grouped.filter((row) => Number(row.total) === 0);
    return {
      rows: sortRows(rows.map((row) => ({
        period: row.period,
        group: Object.fromEntries(query.groupBy.map((dimension) => [dimension, row[SPEND_DIMENSIONS[dimension]]])),
        ...metrics(row),
      })), query.groupBy),
      totals: metrics(totals),
    };
  }
}

function metrics(row: MetricRow): SpendMetrics {
  const count = (value: string | null) => Number(value ?? 0);
  return {
    requests: count(row.requests),
    attempts: count(row.attempts),
    inputTokens: count(row.input_tokens),
    cachedInputTokens: count(row.cached_input_tokens),
    cacheWriteTokens: count(row.cache_write_tokens),
    outputTokens: count(row.output_tokens),
    reasoningTokens: count(row.reasoning_tokens),
    costUsd: new Decimal(row.cost_usd ?? 0).toFixed(12),
    cacheHits: count(row.cache_hits),
    savedUsd: new Decimal(row.saved_usd ?? 0).toFixed(12),
  };
}
