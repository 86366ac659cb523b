import type { MigrationInterface, QueryRunner } from 'typeorm';

const TOKEN_COLUMNS = ['input_tokens', 'cached_input_tokens', 'cache_write_tokens', 'output_tokens', 'reasoning_tokens'];

/**
 * The ledger holds any usage and cost an event can carry past the provider boundary's validator (issue 32):
 * token counts as bigint (an upstream that reported 3e9 prompt tokens failed the page on `integer`, and with
 * it the whole ledger), money as numeric(38, 12) — the 12 decimal places every amount had, and the precision
 * of ClickHouse's Decimal(38, 12), so both round the same way and sum to the same digits; 26 integer digits
 * hold 1.3e9 tokens at a price of 1e6 USD per 1M tokens many times over, per row and in a tenant's total.
 * The table and column names are the contract (DESIGN §5) and do not change. Rewrites both tables once.
 */
export class LedgerWideAmounts1764806400320 implements MigrationInterface {
  name = 'LedgerWideAmounts1764806400320';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE cost_ledger ${[
      ...TOKEN_COLUMNS.map((column) => `ALTER COLUMN ${column} TYPE bigint`),
      'ALTER COLUMN cost_usd TYPE numeric(38, 12)',
      'ALTER COLUMN saved_usd TYPE numeric(38, 12)',
    ].join(', ')}`);
    await runner.query(`ALTER TABLE tenant_spend ALTER COLUMN spent_usd TYPE numeric(38, 12), ALTER COLUMN saved_usd TYPE numeric(38, 12)`);
  }

  /** Fails (and changes nothing) when a row no longer fits the old types. */
  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE tenant_spend ALTER COLUMN spent_usd TYPE numeric(24, 12), ALTER COLUMN saved_usd TYPE numeric(24, 12)`);
    await runner.query(`ALTER TABLE cost_ledger ${[
      ...TOKEN_COLUMNS.map((column) => `ALTER COLUMN ${column} TYPE integer`),
      'ALTER COLUMN cost_usd TYPE numeric(24, 12)',
      'ALTER COLUMN saved_usd TYPE numeric(24, 12)',
    ].join(', ')}`);
  }
}
