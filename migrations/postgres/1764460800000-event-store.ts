import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event store (DESIGN §4). `events` is append-only: a trigger rejects UPDATE, DELETE and TRUNCATE,
 * so history can only grow. Readers order by (transaction_id, global_position) and stop below the
 * snapshot's xmin, which makes the global order gap-free even though commits finish out of identity order.
 */
export class EventStore1764460800000 implements MigrationInterface {
  name = 'EventStore1764460800000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE events (
        global_position bigint GENERATED ALWAYS AS IDENTITY,
        transaction_id  xid8 NOT NULL DEFAULT pg_current_xact_id(),
        stream_id       text NOT NULL,
        stream_version  integer NOT NULL CHECK (stream_version > 0),
        event_id        uuid NOT NULL UNIQUE,
        event_type      text NOT NULL,
        schema_version  smallint NOT NULL,
        data            jsonb NOT NULL,
        metadata        jsonb NOT NULL,
        recorded_at     timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (stream_id, stream_version)
      )`);
    await runner.query(`CREATE UNIQUE INDEX events_global_order ON events (transaction_id, global_position)`);
    await runner.query(`CREATE INDEX events_type_order ON events (event_type, transaction_id, global_position)`);
    await runner.query(`
      CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'events is append-only: % is not allowed', TG_OP USING ERRCODE = 'restrict_violation';
      END $$`);
    await runner.query(`
      CREATE TRIGGER events_no_update_or_delete BEFORE UPDATE OR DELETE ON events
      FOR EACH ROW EXECUTE FUNCTION events_append_only()`);
    await runner.query(`
      CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
      FOR EACH STATEMENT EXECUTE FUNCTION events_append_only()`);
    await runner.query(`COMMENT ON TABLE events IS 'Append-only event log. UPDATE, DELETE and TRUNCATE are rejected by triggers.'`);
    await runner.query(`
      CREATE TABLE projection_checkpoints (
        name            text PRIMARY KEY,
        transaction_id  bigint NOT NULL,
        global_position bigint NOT NULL,
        updated_at      timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE projection_checkpoints`);
    await runner.query(`DROP TABLE events`);
    await runner.query(`DROP FUNCTION events_append_only`);
  }
}
