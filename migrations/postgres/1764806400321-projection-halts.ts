import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `projection_halts`: a durable projection that met an event it cannot apply (a deterministic failure: bad
 * data, a constraint) stops at that event instead of retrying it for ever, and says so here — one row per
 * halted projection, naming the event and the error — so that every process (a serving node, `projections
 * status`, the metrics) sees it wherever the projection runs. The row is removed when the projection moves
 * past the event (after a resume or a rebuild) or by `switchyard projections resume NAME`, which is how a
 * process other than the halted one asks it to try again.
 */
export class ProjectionHalts1764806400321 implements MigrationInterface {
  name = 'ProjectionHalts1764806400321';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE projection_halts (
        name            text PRIMARY KEY,
        transaction_id  xid8 NOT NULL,
        global_position bigint NOT NULL,
        event_id        uuid NOT NULL,
        event_type      text NOT NULL,
        error           text NOT NULL,
        error_code      text,
        halted_at       timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE projection_halts`);
  }
}
