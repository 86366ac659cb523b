import { attemptsMigration } from './0001-attempts.js';
import { spendRollupsMigration } from './0002-spend-rollups.js';
import { cacheHitsMigration } from './0003-cache-hits.js';
import { wideTokenCountsMigration } from './0004-wide-token-counts.js';
import type { ClickHouseMigration } from './clickhouse-migration.js';

export type { ClickHouseMigration } from './clickhouse-migration.js';

/** Every ClickHouse schema step, in order; applied at start and recorded in `{db}.schema_migrations`. */
export const clickhouseMigrations: readonly ClickHouseMigration[] = [
  attemptsMigration, spendRollupsMigration, cacheHitsMigration, wideTokenCountsMigration,
];
