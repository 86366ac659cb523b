/** What finance groups and filters spend by; each maps to a column of cost_ledger and of the rollups. */
export const SPEND_DIMENSIONS = {
  tenant: 'tenant_id',
  key: 'key_id',
  alias: 'alias',
  deployment: 'deployment_id',
  provider: 'provider_id',
  model: 'model',
} as const;

export type SpendDimension = keyof typeof SPEND_DIMENSIONS;
export const SPEND_DIMENSION_NAMES = Object.keys(SPEND_DIMENSIONS) as SpendDimension[];

/** Hours and days are rollup buckets; weeks (ISO, from Monday 00:00 UTC) and calendar months (UTC) are sums of days. */
export const GRANULARITIES = ['hour', 'day', 'week', 'month'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

export interface SpendQuery {
  /** Inclusive, on a bucket boundary (UTC). */
  from: Date;
  /** Exclusive, on a bucket boundary (UTC). */
  to: Date;
  granularity: Granularity;
  groupBy: readonly SpendDimension[];
  filters: Partial<Record<SpendDimension, string>>;
}

/**
 * Spend over billable attempts (the ledger's rows): what both sources hold exactly. `requests` counts
 * distinct requests with a billable attempt; a request that failed over counts once per group it touched.
 * Exact-cache hits are the ledger's zero-cost rows: counted apart (`cacheHits`), with what they saved.
 */
export interface SpendMetrics {
  requests: number;
  attempts: number;
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  /** Exact decimal, 12 places (the ledger's precision). */
  costUsd: string;
  /** Requests answered from the exact cache (no provider attempt, zero cost, zero tokens). */
  cacheHits: number;
  /** What those answers cost when a provider produced them; exact decimal, 12 places. */
  savedUsd: string;
}

export type SpendGroup = Partial<Record<SpendDimension, string>>;

export interface SpendRow extends SpendMetrics {
  /** `YYYY-MM-DDTHH:00:00Z` for hours, `YYYY-MM-DD` for days and for weeks (their Monday), `YYYY-MM` for months (UTC). */
  period: string;
  group: SpendGroup;
}

export interface SpendResult {
  rows: SpendRow[];
  totals: SpendMetrics;
}

/** Where a report is computed: ClickHouse rollups, or the PostgreSQL ledger. */
export interface SpendSource {
  readonly name: 'clickhouse' | 'postgres';
  report(query: SpendQuery): Promise<SpendResult>;
}

export const METRIC_COLUMNS = [
  ['requests', 'requests'], ['attempts', 'attempts'], ['inputTokens', 'input_tokens'], ['cachedInputTokens', 'cached_input_tokens'],
  ['cacheWriteTokens', 'cache_write_tokens'], ['outputTokens', 'output_tokens'], ['reasoningTokens', 'reasoning_tokens'], ['costUsd', 'cost_usd'],
  ['cacheHits', 'cache_hits'], ['savedUsd', 'saved_usd'],
] as const;

/** Rows in one order whatever the source: by period, then by group values in code-unit order. */
export function sortRows(rows: SpendRow[], groupBy: readonly SpendDimension[]): SpendRow[] {
  const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return rows.sort((a, b) => compare(a.period, b.period) || groupBy.reduce((order, dimension) => order || compare(a.group[dimension] ?? '', b.group[dimension] ?? ''), 0));
}
