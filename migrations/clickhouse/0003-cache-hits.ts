import type { ClickHouseMigration } from './clickhouse-migration.js';

const DIMENSIONS = 'tenant_id, key_id, alias, deployment_id, provider_id, model';

/**
 * Exact-cache hits: one `cache_hits` row per RequestServedFromCache, as the ledger records it (zero cost
 * and tokens: no provider was called; the saving is what the cached answer cost when a provider produced
 * it), and two rollups of their count and saving by hour and by day, with the dimensions of spend_hourly
 * and spend_daily. The rollups are tables of their own rather than columns added to spend_*: on
 * ClickHouse 18.16 a materialized view must write every column of its target, so new columns there would
 * mean dropping and recreating the attempts' views — a window in which a concurrent insert would miss
 * them. ReplacingMergeTree over request_id is a second guard only, as for `attempts`.
 */
export const cacheHitsMigration: ClickHouseMigration = {
  version: 3,
  name: 'cache-hits',
  statements: [
    `CREATE TABLE IF NOT EXISTS {db}.cache_hits (
      event_id              String,
      transaction_id        UInt64,
      global_position       UInt64,
      recorded_at           DateTime('UTC'),
      request_id            String,
      tenant_id             String,
      key_id                String,
      alias                 String,
      deployment_id         String,
      provider_id           String,
      model                 String,
      source_request_id     String,
      price_version         UInt32,
      input_tokens          UInt32,
      cached_input_tokens   UInt32,
      cache_write_tokens    UInt32,
      output_tokens         UInt32,
      reasoning_tokens      UInt32,
      cost_usd              Decimal(38, 12),
      saved_usd             Decimal(38, 12)
    ) ENGINE = ReplacingMergeTree()
    PARTITION BY toYYYYMM(recorded_at)
    ORDER BY (tenant_id, recorded_at, request_id)`,
    `CREATE TABLE IF NOT EXISTS {db}.cache_savings_hourly (
      hour                  DateTime('UTC'),
      tenant_id String, key_id String, alias String, deployment_id String, provider_id String, model String,
      cache_hits            UInt64,
      saved_usd             Decimal(38, 12)
    ) ENGINE = SummingMergeTree()
    PARTITION BY toYYYYMM(hour)
    ORDER BY (hour, ${DIMENSIONS})`,
    `CREATE TABLE IF NOT EXISTS {db}.cache_savings_daily (
      day                   Date,
      tenant_id String, key_id String, alias String, deployment_id String, provider_id String, model String,
      cache_hits            UInt64,
      saved_usd             Decimal(38, 12)
    ) ENGINE = SummingMergeTree()
    PARTITION BY toYYYYMM(day)
    ORDER BY (day, ${DIMENSIONS})`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.cache_savings_hourly_mv TO {db}.cache_savings_hourly AS
    SELECT toStartOfHour(recorded_at) AS hour, ${DIMENSIONS}, count() AS cache_hits, sum(saved_usd) AS saved_usd
    FROM {db}.cache_hits
    GROUP BY hour, ${DIMENSIONS}`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.cache_savings_daily_mv TO {db}.cache_savings_daily AS
    SELECT toDate(recorded_at) AS day, ${DIMENSIONS}, count() AS cache_hits, sum(saved_usd) AS saved_usd
    FROM {db}.cache_hits
    GROUP BY day, ${DIMENSIONS}`,
  ],
};
