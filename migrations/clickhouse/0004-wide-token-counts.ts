import type { ClickHouseMigration } from './clickhouse-migration.js';

const TOKEN_COLUMNS = ['input_tokens', 'cached_input_tokens', 'cache_write_tokens', 'output_tokens', 'reasoning_tokens'];

/**
 * Token counts of `attempts` as UInt64, like the ledger's bigint (issue 32): an upstream that reported 3e9
 * prompt tokens no longer fits UInt32. The rollups already sum into UInt64 and their views read the column
 * as it is now, so nothing else changes; `cache_hits` records zero tokens by definition. MODIFY COLUMN to the
 * type a column already has does nothing, so the step can run again (18.16 and current releases).
 */
export const wideTokenCountsMigration: ClickHouseMigration = {
  version: 4,
  name: 'wide-token-counts',
  statements: [
    `ALTER TABLE {db}.attempts ${TOKEN_COLUMNS.map((column) => `MODIFY COLUMN ${column} UInt64`).join(', ')}`,
  ],
};
