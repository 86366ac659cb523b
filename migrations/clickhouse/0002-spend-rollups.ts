import type { ClickHouseMigration } from './clickhouse-migration.js';

const DIMENSIONS = 'tenant_id, key_id, alias, deployment_id, provider_id, model';

/** Columns of both rollups after the time bucket: sums, then aggregate-function states. */
const MEASURES = `
      attempts              UInt64,
      billable_attempts     UInt64,
      errors                UInt64,
      cancelled             UInt64,
      prompt_cache_hits     UInt64,
      input_tokens          UInt64,
      cached_input_tokens   UInt64,
      cache_write_tokens    UInt64,
      output_tokens         UInt64,
      reasoning_tokens      UInt64,
      cost_usd              Decimal(38, 12),
      requests              AggregateFunction(uniqExact, String),
      billable_requests     AggregateFunction(uniqExactIf, String, UInt8),
      latency_ms_quantiles  AggregateFunction(quantilesTDigest(0.5, 0.9, 0.99), UInt32),
      ttft_ms_quantiles     AggregateFunction(quantilesTDigestIf(0.5, 0.9, 0.99), UInt32, UInt8)`;

/** The SELECT list that turns a block of inserted attempts into rollup rows (after bucket and dimensions). */
const AGGREGATES = `
      count() AS attempts,
      sum(billable) AS billable_attempts,
      countIf(outcome != 'success') AS errors,
      countIf(outcome = 'cancelled') AS cancelled,
      sum(prompt_cache_hit) AS prompt_cache_hits,
      sum(input_tokens) AS input_tokens,
      sum(cached_input_tokens) AS cached_input_tokens,
      sum(cache_write_tokens) AS cache_write_tokens,
      sum(output_tokens) AS output_tokens,
      sum(reasoning_tokens) AS reasoning_tokens,
      sum(cost_usd) AS cost_usd,
      uniqExactState(request_id) AS requests,
      uniqExactIfState(request_id, billable) AS billable_requests,
      quantilesTDigestState(0.5, 0.9, 0.99)(latency_ms) AS latency_ms_quantiles,
      quantilesTDigestIfState(0.5, 0.9, 0.99)(assumeNotNull(ttft_ms), toUInt8(isNotNull(ttft_ms))) AS ttft_ms_quantiles`;

/**
 * spend_hourly and spend_daily (DESIGN §5): SummingMergeTree fed by materialized views on `attempts`.
 * A view sees every inserted block, so the rollups are exact exactly when each attempt is inserted once,
 * which the writer guarantees (README "ClickHouse"). Sums merge by addition and the aggregate-function
 * columns (distinct requests, latency quantiles) merge as AggregatingMergeTree would; queries still
 * aggregate with GROUP BY because parts merge in the background. Both views read `attempts` directly
 * rather than chaining daily on hourly, which old releases handle unevenly. No column alias equals a
 * source column another expression reads (18.16 resolves aliases first), hence the precomputed
 * `billable` and `prompt_cache_hit` flags. Never GROUP BY a Decimal column: 18.16 crashes on it.
 */
export const spendRollupsMigration: ClickHouseMigration = {
  version: 2,
  name: 'spend-rollups',
  statements: [
    `CREATE TABLE IF NOT EXISTS {db}.spend_hourly (
      hour                  DateTime('UTC'),
      tenant_id String, key_id String, alias String, deployment_id String, provider_id String, model String,${MEASURES}
    ) ENGINE = SummingMergeTree()
    PARTITION BY toYYYYMM(hour)
    ORDER BY (hour, ${DIMENSIONS})`,
    `CREATE TABLE IF NOT EXISTS {db}.spend_daily (
      day                   Date,
      tenant_id String, key_id String, alias String, deployment_id String, provider_id String, model String,${MEASURES}
    ) ENGINE = SummingMergeTree()
    PARTITION BY toYYYYMM(day)
    ORDER BY (day, ${DIMENSIONS})`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.spend_hourly_mv TO {db}.spend_hourly AS
    SELECT toStartOfHour(recorded_at) AS hour, ${DIMENSIONS},${AGGREGATES}
    FROM {db}.attempts
    GROUP BY hour, ${DIMENSIONS}`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.spend_daily_mv TO {db}.spend_daily AS
    SELECT toDate(recorded_at) AS day, ${DIMENSIONS},${AGGREGATES}
    FROM {db}.attempts
    GROUP BY day, ${DIMENSIONS}`,
  ],
};
