import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Exact-cache hits in the ledger: a hit is a row with zero cost (`outcome` 'cache_hit', attempt 0: no
 * provider attempt) whose `saved_usd` is what the cached answer cost when a provider produced it;
 * tenant spend keeps the running saving beside the running spend. Existing rows saved nothing.
 */
export class LedgerCacheSavings1764633600300 implements MigrationInterface {
  name = 'LedgerCacheSavings1764633600300';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE cost_ledger ADD COLUMN saved_usd numeric(24, 12) NOT NULL DEFAULT 0`);
    await runner.query(`ALTER TABLE tenant_spend ADD COLUMN saved_usd numeric(24, 12) NOT NULL DEFAULT 0`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE tenant_spend DROP COLUMN saved_usd`);
    await runner.query(`ALTER TABLE cost_ledger DROP COLUMN saved_usd`);
  }
}
