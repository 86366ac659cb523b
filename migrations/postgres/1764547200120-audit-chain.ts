import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit chain (DESIGN §5): one row per event in global order, `hash = sha256(prev_hash ‖ canonical
 * event)`, and signed checkpoints over (sequence, position, hash) so that a truncated tail is detectable.
 * Checkpoints are attestations of what the chain was when they were signed: a rebuild keeps them.
 */
export class AuditChain1764547200120 implements MigrationInterface {
  name = 'AuditChain1764547200120';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE audit_chain (
        global_position bigint PRIMARY KEY,
        sequence        bigint NOT NULL UNIQUE CHECK (sequence > 0),
        transaction_id  xid8 NOT NULL,
        event_id        uuid NOT NULL UNIQUE,
        prev_hash       text NOT NULL CHECK (prev_hash ~ '^[0-9a-f]{64}$'),
        hash            text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$')
      )`);
    await runner.query(`COMMENT ON TABLE audit_chain IS 'hash = sha256(prev_hash bytes || canonical event), in global order; see README "Audit chain".'`);
    await runner.query(`
      CREATE TABLE audit_checkpoints (
        sequence        bigint PRIMARY KEY CHECK (sequence > 0),
        global_position bigint NOT NULL,
        hash            text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
        algorithm       text NOT NULL CHECK (algorithm IN ('hmac-sha256', 'ed25519')),
        key_id          text NOT NULL,
        signature       text NOT NULL,
        signed_at       timestamptz NOT NULL DEFAULT now()
      )`);
    await runner.query(`CREATE INDEX audit_checkpoints_signed_at ON audit_checkpoints (signed_at)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE audit_checkpoints`);
    await runner.query(`DROP TABLE audit_chain`);
  }
}
