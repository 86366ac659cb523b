import { ConfigurationError } from '../kernel/configuration-error.js';
import type { SqlExecutor } from '../kernel/database/database.js';

/**
 * "A `switchyard migrate` into this database has begun and not finished": a table of one row that names the
 * source. Created in the target before the first event is copied and dropped once the copy is verified, so
 * a target holding part of a log is always one that says whose log it is. A migrate run again from that same
 * source resumes it; a target with Switchyard rows and no marker (or another source's) is refused, and a
 * server refuses to start on it until the migration completes. It is not part of the schema's migrations:
 * a database that never received a migration never has it.
 */
export const MIGRATION_MARKER_TABLE = 'switchyard_migration_in_progress';

export interface MigrationMarker {
  /** The source's identity (store-endpoint.ts): where the log comes from. */
  source: string;
  /** The source as printed (no password). */
  sourceLabel: string;
  startedAt: string;
}

export async function readMigrationMarker(executor: SqlExecutor): Promise<MigrationMarker | null> {
  const [exists] = await executor.query<{ present: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS present`, [MIGRATION_MARKER_TABLE]);
  if (!exists?.present) return null;
  const rows = await executor.query<{ source: string; source_label: string; started_at: string }>(
    `SELECT source, source_label, to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS started_at FROM ${MIGRATION_MARKER_TABLE}`,
  );
  const row = rows[0];
  return row ? { source: row.source, sourceLabel: row.source_label, startedAt: row.started_at } : { source: '', sourceLabel: 'an unknown source', startedAt: '' };
}

/** Marks the target as receiving the source's log (one transaction: the table and its row appear together). */
export async function writeMigrationMarker(executor: { transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> }, source: string, sourceLabel: string): Promise<void> {
  await executor.transaction(async (tx) => {
    await tx.query(`CREATE TABLE ${MIGRATION_MARKER_TABLE} (source text NOT NULL, source_label text NOT NULL, started_at timestamptz NOT NULL DEFAULT now())`);
    await tx.query(`COMMENT ON TABLE ${MIGRATION_MARKER_TABLE} IS 'switchyard migrate has not finished copying into this database; run it again to complete it'`);
    await tx.query(`INSERT INTO ${MIGRATION_MARKER_TABLE} (source, source_label) VALUES ($1, $2)`, [source, sourceLabel]);
  });
}

export async function removeMigrationMarker(executor: SqlExecutor): Promise<void> {
  await executor.query(`DROP TABLE IF EXISTS ${MIGRATION_MARKER_TABLE}`);
}

/** A server does not start on a database that a migrate is still filling: its log and read models are partial. */
export async function checkNoMigrationInProgress(executor: SqlExecutor): Promise<void> {
  const marker = await readMigrationMarker(executor);
  if (!marker) return;
  throw new ConfigurationError(
    `This database is the target of a \`switchyard migrate\` from ${marker.sourceLabel} that has not finished (started ${marker.startedAt}): ` +
      `its log and read models are incomplete. Run the same \`switchyard migrate\` again to complete it (it resumes where it stopped).`,
  );
}
