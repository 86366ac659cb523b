import { createHash } from 'node:crypto';
import { PLAIN_IDENTIFIER, type SqlExecutor } from '../database/database.js';
import type { ReplacedTable } from './projection.js';

/**
 * The PostgreSQL side of a rebuild aside (docs/operations.md "Rebuilding aside"): a schema of the rebuild's own holding
 * an empty copy of each table the projection writes (`CREATE TABLE … (LIKE live INCLUDING ALL)`: columns,
 * defaults, constraints, indexes — what the projection's statements rely on, ON CONFLICT targets included)
 * and of `projection_checkpoints`, where the replay keeps its own checkpoint under the projection's name.
 * The replay's transactions put the schema first on the search path; the swap then makes each live table
 * equal to its copy.
 */

/** The tables every rebuild copies besides the projection's own: the checkpoint the replay moves. */
const CHECKPOINTS: ReplacedTable = { name: 'projection_checkpoints' };

/**
 * The rebuild's schema for a projection: `switchyard_rebuild_` and the name in lower case with every other
 * character an underscore — plus a short hash when that is not the name itself (two names never share one).
 */
export function replacementSchema(projection: string): string {
  const slug = projection.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 32);
  const exact = slug === projection && slug.length > 0;
  return exact ? `switchyard_rebuild_${slug}` : `switchyard_rebuild_${slug}_${createHash('sha256').update(projection).digest('hex').slice(0, 8)}`;
}

/** A name as a quoted identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Where a live table is, as a qualified name (found through the session's own search path, as the projection finds it). */
export async function liveTable(executor: SqlExecutor, table: string): Promise<string> {
  const rows = await executor.query<{ schema: string | null }>(
    `SELECT n.nspname AS schema FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)`,
    [quoteIdent(table)],
  );
  if (!rows[0]?.schema) throw new Error(`The table ${table} does not exist`);
  return `${quoteIdent(rows[0].schema)}.${quoteIdent(table)}`;
}

/** A table a rebuild replaces, with the qualified names of the live table and of its copy. */
export interface TablePair extends ReplacedTable {
  live: string;
  copy: string;
}

/** What a rebuild's storage in PostgreSQL is: its schema, the projection's tables, and the live tables the swap writes besides. */
export interface ReplacementTables {
  schema: string;
  tables: TablePair[];
  /** The live `projection_checkpoints` and `projection_halts`, qualified (the swap runs with the rebuild's schema first on its path). */
  checkpoints: string;
  halts: string;
}

/**
 * Drops what an earlier rebuild of the projection may have left (a crash mid-replay), then creates the empty
 * copies. Run on a session whose search path is the ordinary one: that is where the live tables are found.
 */
export async function createReplacementTables(executor: SqlExecutor, schema: string, tables: readonly ReplacedTable[]): Promise<ReplacementTables> {
  if (!PLAIN_IDENTIFIER.test(schema)) throw new Error(`Not a plain schema name: ${schema}`);
  await dropReplacementTables(executor, schema);
  await executor.query(`CREATE SCHEMA ${schema}`);
  const pairs: TablePair[] = [];
  for (const table of [...tables, CHECKPOINTS]) {
    const pair: TablePair = { name: table.name, rowsOf: table.rowsOf, live: await liveTable(executor, table.name), copy: `${schema}.${quoteIdent(table.name)}` };
    await executor.query(`CREATE TABLE ${pair.copy} (LIKE ${pair.live} INCLUDING ALL)`);
    pairs.push(pair);
  }
  return { schema, tables: pairs.slice(0, -1), checkpoints: pairs[pairs.length - 1].live, halts: await liveTable(executor, 'projection_halts') };
}

export async function dropReplacementTables(executor: SqlExecutor, schema: string): Promise<void> {
  if (!PLAIN_IDENTIFIER.test(schema)) throw new Error(`Not a plain schema name: ${schema}`);
  await executor.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}

export interface ReplacedRows {
  table: string;
  /** Live rows that differed from the replacement (or were not in it) and were deleted. */
  removed: number;
  /** Rows of the replacement the live table did not hold, inserted. */
  added: number;
}

/**
 * In the swap's transaction: makes the live table's rows (the projection's rows of a shared table) equal to
 * the replacement's, writing only where they differ — a rebuild that reproduces the read model (the usual
 * case) rewrites nothing, and readers see the old rows until the swap commits (no TRUNCATE: no lock that
 * stops them). Rows compare by their text, column by column (so 1.50 and 1.5 differ); identity and
 * generated columns are the live table's own and left out (the live table numbers the rows it takes, in
 * the replacement's order). Each statement is one hash anti-join over both tables.
 */
export async function replaceRows(tx: SqlExecutor, table: TablePair): Promise<ReplacedRows> {
  const { live, copy } = table;
  const columns = await tx.query<{ name: string; numbering: boolean; generated: boolean }>(
    `SELECT a.attname AS name, a.attidentity <> '' AS numbering, a.attgenerated <> '' AS generated
     FROM pg_attribute a WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [live],
  );
  const compared = columns.filter((c) => !c.numbering && !c.generated).map((c) => quoteIdent(c.name));
  const numbering = columns.find((c) => c.numbering);
  const rowText = (alias: string) => `ROW(${compared.map((c) => `${alias}.${c}`).join(', ')})::text`;
  const params = table.rowsOf ? [table.rowsOf.value] : [];
  const scope = (alias: string) => (table.rowsOf ? `${alias}.${quoteIdent(table.rowsOf.column)} = $1 AND ` : '');
  const [removed] = await tx.query<{ n: string }>(
    `WITH gone AS (
       DELETE FROM ${live} l WHERE ${scope('l')}NOT EXISTS (SELECT 1 FROM ${copy} s WHERE ${scope('s')}${rowText('s')} = ${rowText('l')})
       RETURNING 1)
     SELECT count(*)::text AS n FROM gone`,
    params,
  );
  const [added] = await tx.query<{ n: string }>(
    `WITH taken AS (
       INSERT INTO ${live} (${compared.join(', ')})
       SELECT ${compared.map((c) => `s.${c}`).join(', ')} FROM ${copy} s
       WHERE ${scope('s')}NOT EXISTS (SELECT 1 FROM ${live} l WHERE ${scope('l')}${rowText('l')} = ${rowText('s')})
       ${numbering ? `ORDER BY s.${quoteIdent(numbering.name)}` : ''}
       RETURNING 1)
     SELECT count(*)::text AS n FROM taken`,
    params,
  );
  return { table: table.name, removed: Number(removed?.n ?? 0), added: Number(added?.n ?? 0) };
}
