import type { ClickHouseMigration } from './clickhouse-migration.js';

/**
 * Raw attempts: one row per AttemptFinished (DESIGN §5 `attempts`). Partitioned by month, ordered by
 * tenant and time (the common filter of finance queries). ReplacingMergeTree over the natural key
 * (request_id, attempt) is a second guard only: exactly-once comes from the writer (README "ClickHouse").
 * Works on ClickHouse 18.16 and current releases: plain types, DateTime('UTC'), Decimal(38, 12).
 */
export const attemptsMigration: ClickHouseMigration = {
  version: 1,
  name: 'attempts',
  statements: [
    `CREATE TABLE IF NOT EXISTS {db}.attempts (
      event_id              String,
      transaction_id        UInt64,
      global_position       UInt64,
      recorded_at           DateTime('UTC'),
      request_id            String,
      attempt               UInt16,
      tenant_id             String,
      key_id                String,
      alias                 String,
      deployment_id         String,
      provider_id           String,
      model                 String,
      strategy              String,
      outcome               String,
      error_class           String,
      deadline              String,
      http_status           UInt16,
      billable              UInt8,
      prompt_cache_hit      UInt8,
      input_tokens          UInt32,
      cached_input_tokens   UInt32,
      cache_write_tokens    UInt32,
      output_tokens         UInt32,
      reasoning_tokens      UInt32,
      usage_evidence        String,
      input_cost_usd        Decimal(38, 12),
      cached_input_cost_usd Decimal(38, 12),
      cache_write_cost_usd  Decimal(38, 12),
      output_cost_usd       Decimal(38, 12),
      cost_usd              Decimal(38, 12),
      price_version         UInt32,
      latency_ms            UInt32,
      ttft_ms               Nullable(UInt32),
      provider_request_id   String
    ) ENGINE = ReplacingMergeTree()
    PARTITION BY toYYYYMM(recorded_at)
    ORDER BY (tenant_id, recorded_at, request_id, attempt)`,
  ],
};
