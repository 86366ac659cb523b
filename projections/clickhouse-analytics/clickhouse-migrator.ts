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

/**
 * A rebuild's empty copy of the whole schema: every step's statements run again with each object's name
 * (`{db}.attempts`, `{db}.spend_hourly_mv`, …) given `suffix`, so the copies have the columns the live
 * tables have now (later steps' ALTERs included) and views that feed the copies' rollups from the copies'
 * raw tables. Recorded nowhere: the copies are dropped or renamed into place when the rebuild ends.
 */
export async function createRebuildTables(
  connection: ClickHouseConnection,
  suffix: string,
  migrations: readonly ClickHouseMigration[] = clickhouseMigrations,
): Promise<void> {
  if (!/^\w+$/.test(suffix)) throw new Error(`Not a table-name suffix: ${suffix}`);
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    for (const statement of migration.statements) {
      await connection.command(statement.replace(/\{db\}\.(\w+)/g, (_, name: string) => `${connection.database}.${name}${suffix}`));
    }
  }
}
