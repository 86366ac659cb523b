import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `projection_checkpoints.transaction_id` becomes xid8, the type of `events.transaction_id`. As bigint
 * it invited casts through text at every comparison with the log (one of which compared as text), and
 * it cannot hold every xid8 (an unsigned 64-bit value). Stored checkpoints keep their values.
 */
export class CheckpointXid81764547200000 implements MigrationInterface {
  name = 'CheckpointXid81764547200000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE projection_checkpoints ALTER COLUMN transaction_id TYPE xid8 USING transaction_id::text::xid8`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE projection_checkpoints ALTER COLUMN transaction_id TYPE bigint USING transaction_id::text::bigint`);
  }
}
