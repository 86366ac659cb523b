import type { CopyValue } from './copy-rows.js';

/**
 * The narrow SQL port shared by the event store, projections and migrations. Two adapters implement it
 * over the same SQL: a real PostgreSQL server (`pg`) and embedded PGlite.
 */
export interface SqlExecutor {
  /**
   * `statementName` asks for a named prepared statement where the adapter has them (pg: parsed and
   * planned once per connection); the same name must always carry the same SQL.
   */
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[], statementName?: string): Promise<Row[]>;
  /**
   * Loads rows into `columns` of `table` (each row's values in the columns' order) where the adapter has a
   * cheaper way than one INSERT of many rows: the embedded engine's COPY from a CSV blob, which takes about
   * 40 % less of its time than the same rows parsed out of a JSON parameter — and the embedded engine's one
   * session is what every request's append waits for. Absent (PostgreSQL): the caller writes an INSERT.
   */
  copyRows?(table: string, columns: readonly string[], rows: readonly (readonly CopyValue[])[]): Promise<void>;
}

export interface Lease {
  /** False once the session that held the lease is gone; the holder must stop its work. */
  readonly held: boolean;
  release(): Promise<void>;
}

/** What readiness reports about the database: whether it answers, and every part that is failing, by name. */
export interface DatabaseHealth {
  reachable: boolean;
  /** e.g. `queries: Connection terminated unexpectedly`, `notifications: reconnecting`. Empty when healthy. */
  problems: string[];
}

export interface TransactionOptions {
  /**
   * `background`: COMMIT returns once the transaction is committed and visible, without waiting for its
   * WAL to reach the disk (`synchronous_commit = off` for this transaction alone). A crash of the server
   * can then lose it whole — never part of it — so this is only for work that is rebuilt from the log
   * and moves its own checkpoint in the same transaction: after such a loss it is simply done again.
   * Default `wait`. The embedded engine has no disk flush to skip (its file layer's fsync writes nothing) and
   * ignores it.
   */
  flush?: 'wait' | 'background';
  /**
   * A statement of fixed text (its values written into it, no parameters) that the transaction opens with,
   * in the round trip of its BEGIN; its rows are `work`'s second argument.
   */
  opening?: string;
  /**
   * A statement of fixed text run in the round trip of the COMMIT, once `work` has succeeded; if it fails,
   * the whole transaction is rolled back. With `opening`, a transaction that wraps its work in one statement
   * before and one after takes two round trips fewer.
   */
  closing?: string;
  /**
   * A schema put first on the search path for this transaction alone (`SET LOCAL`), before `opening`: the
   * unqualified names of the transaction's statements find that schema's tables first and every other table
   * where they always are. A rebuild replays a projection into tables of its own this way, running the
   * projection's SQL unchanged; named statements are parsed again under the changed path (PostgreSQL does
   * so since 9.3 for PREPARE and the extended protocol alike; test/integration/projection-rebuild-aside.test.ts
   * checks both adapters). A plain identifier (lower-case letters, digits, underscores).
   */
  searchPath?: string;
}

/** A schema name `TransactionOptions.searchPath` accepts: one that is an identifier as it stands, never quoted. */
export const PLAIN_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** The statement that puts `schema` first on the search path until the transaction ends. */
export function searchPathStatement(schema: string): string {
  if (!PLAIN_IDENTIFIER.test(schema)) throw new Error(`Not a plain schema name: ${schema}`);
  return `SELECT set_config('search_path', '${schema}, ' || current_setting('search_path'), true)`;
}

/** What a transaction's work is given: its statements, and the rows of its `opening` statement (none without one). */
export type TransactionWork<T> = (tx: SqlExecutor, opened: ReadonlyArray<Record<string, unknown>>) => Promise<T>;

export interface Database extends SqlExecutor {
  readonly kind: 'postgres' | 'pglite';
  /** How many transactions can usefully run at once (PGlite has one session). */
  readonly maxConcurrentTransactions: number;
  transaction<T>(work: TransactionWork<T>, options?: TransactionOptions): Promise<T>;
  /** Calls `onNotify` for every NOTIFY on `channel`; resolves to an unsubscribe function. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /** Session-level advisory lock: a lease that one process at a time holds. Null when taken. */
  tryAcquireLease(key: number): Promise<Lease | null>;
  /** Probes the server with one cheap query (bounded by `timeoutMs`) and names every failing part. */
  checkHealth(timeoutMs: number): Promise<DatabaseHealth>;
  /** The `driver` object handed to TypeORM's postgres driver (undefined = plain `pg`). */
  typeormDriver(): unknown;
  close(): Promise<void>;
}

/** PostgreSQL error code for unique violations. */
export const UNIQUE_VIOLATION = '23505';

export function sqlErrorCode(error: unknown): string | undefined {
  const candidate = error as { code?: unknown; driverError?: { code?: unknown } };
  if (typeof candidate?.code === 'string') return candidate.code;
  if (typeof candidate?.driverError?.code === 'string') return candidate.driverError.code;
  return undefined;
}
