import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Admin tokens (DESIGN §8: generated on first start, printed once, stored hashed). A credential, not a
 * domain fact: it lives in a table rather than the append-only event log so that a leaked token can be
 * deleted or replaced, and so that not even its hash travels to the audit chain or analytics consumers.
 */
export class AdminTokens1764460800020 implements MigrationInterface {
  name = 'AdminTokens1764460800020';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE admin_tokens (
        token_id   text PRIMARY KEY,
        hash       text NOT NULL UNIQUE CHECK (hash ~ '^[0-9a-f]{64}$'),
        origin     text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE admin_tokens`);
  }
}
