import { clickhouseMigrations, type ClickHouseMigration } from '../../migrations/clickhouse/index.js';
import { type ClickHouseConnection, quoteString } from './clickhouse-connection.js';

/**
 * Applies the ClickHouse schema steps not yet recorded in `{db}.schema_migrations`, creating the database
 * first. Every statement is idempotent, so a step cut short (ClickHouse DDL is not transactional) or run
 * by two nodes at once converges; the record is written after its statements.
 */
export async function migrateClickHouse(
  connection: ClickHouseConnection,
  migrations: readonly ClickHouseMigration[] = clickhouseMigrations,
): Promise<string[]> {
  await connection.ensureDatabase();
  const record = connection.table('schema_migrations');
  await connection.command(
    `CREATE TABLE IF NOT EXISTS ${record} (version UInt32, name String, applied_at DateTime('UTC'))
     ENGINE = MergeTree() ORDER BY version`,
  );
  const rows = await connection.rows<{ version: string }>(`SELECT DISTINCT toString(version) AS version FROM ${record}`);
  const applied = new Set(rows.map((row) => Number(row.version)));
  const done: string[] = [];
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (applied.has(migration.version)) continue;
    for (const statement of migration.statements) await connection.command(statement.replaceAll('{db}', connection.database));
    await connection.command(
      `INSERT INTO ${record} (version, name, applied_at) VALUES (${migration.version}, ${quoteString(migration.name)}, now())`,
    );
    done.push(`${migration.version}-${migration.name}`);
  }
  return done;
}
