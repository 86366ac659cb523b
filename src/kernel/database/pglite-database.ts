import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { describeDatabaseError } from './connection-loss.js';
import { type Database, type DatabaseHealth, type Lease, type SqlExecutor, type TransactionOptions, type TransactionWork, searchPathStatement } from './database.js';
import { DataDirLock } from './data-dir-lock.js';
import { type CopyValue, copyStatement, csvRows } from './copy-rows.js';
import { Mutex } from './mutex.js';
import { PgliteThread } from './pglite-thread.js';

interface PgLikeResult {
  rows: Record<string, unknown>[];
  rowCount: number;
  command: string;
}

/**
 * Embedded PostgreSQL (PGlite) for the quick start, on a thread of its own (`PgliteThread`): the engine's
 * work no longer stops the gateway's event loop. PGlite has a single session, so this adapter owns
 * one mutex that every transaction holds from BEGIN to COMMIT — including TypeORM's query runners,
 * which receive the session through `typeormDriver()`. (typeorm-pglite hands the same session to
 * concurrent query runners without isolation, which would interleave projection transactions with
 * event appends; that is why this adapter carries its own pg-compatible pool.)
 */
export class PgliteDatabase implements Database {
  readonly kind = 'pglite' as const;
  readonly maxConcurrentTransactions = 1;
  private readonly session = new Mutex();

  private constructor(
    private readonly pg: PgliteThread,
    private readonly lock: DataDirLock | null,
  ) {}

  static async open(dataDir: string | null): Promise<PgliteDatabase> {
    let lock: DataDirLock | null = null;
    if (dataDir) {
      mkdirSync(dataDir, { recursive: true });
      lock = DataDirLock.acquire(dataDir);
    }
    try {
      // The engine's settings (int8 as strings, booleans, no zero-filled WAL segments) are the thread's.
      const pg = await PgliteThread.start(dataDir ? `${dataDir}/pgdata` : null);
      return new PgliteDatabase(pg, lock);
    } catch (error) {
      lock?.release();
      throw error;
    }
  }

  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[], statementName?: string): Promise<Row[]> {
    return this.session.run(async () => (await this.run(sql, params, statementName)).rows as Row[]);
  }

  copyRows(table: string, columns: readonly string[], rows: readonly (readonly CopyValue[])[]): Promise<void> {
    return rows.length === 0 ? Promise.resolve() : this.session.run(() => this.copy(table, columns, rows));
  }

  transaction<T>(work: TransactionWork<T>, options?: TransactionOptions): Promise<T> {
    return this.session.run(async () => {
      // BEGIN travels with the transaction's first statement (the engine's thread runs it first), and COMMIT
      // with its `closing` statement: round trips fewer while the one session is held. A transaction that
      // runs no statement opens none. `flush` has nothing to skip here (see TransactionOptions).
      let begun = false;
      const opens = () => !begun && (begun = true);
      const tx: SqlExecutor = {
        query: async <Row>(sql: string, params?: readonly unknown[], statementName?: string) =>
          (await this.run(sql, params, statementName, opens())).rows as Row[],
        // No rows, no statement: the transaction must not count as opened by a COPY never sent.
        copyRows: async (table, columns, rows) => {
          if (rows.length > 0) await this.copy(table, columns, rows, opens());
        },
      };
      try {
        if (options?.searchPath) await this.run(searchPathStatement(options.searchPath), undefined, undefined, opens());
        const opened = options?.opening ? (await this.run(options.opening, undefined, undefined, opens())).rows : [];
        const result = await work(tx, opened);
        if (options?.closing) await this.pg.exec(`${options.closing}; COMMIT`, opens());
        else if (begun) await this.pg.exec('COMMIT');
        return result;
      } catch (error) {
        if (begun) await this.pg.exec('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
    const unsubscribe = await this.session.run(() => this.pg.listen(channel, onNotify));
    return async () => {
      await this.session.run(() => unsubscribe());
    };
  }

  async tryAcquireLease(): Promise<Lease> {
    // The data-dir lock already makes this process the only one; every lease is ours.
    return { held: true, release: async () => undefined };
  }

  async checkHealth(timeoutMs: number): Promise<DatabaseHealth> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      return { reachable: true, problems: [] };
    } catch (error) {
      // In process, the engine's own message names no address; say what it says.
      const described = describeDatabaseError(error);
      const message = error instanceof Error ? error.message.slice(0, 200) : '';
      return { reachable: false, problems: [`queries: ${described === 'query failed' && message ? message : described}`] };
    } finally {
      clearTimeout(timer);
    }
  }

  typeormDriver(): unknown {
    // TypeORM constructs the pool itself (`new driver.Pool(options)`), so bind the adapter in a closure.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const database = this;
    class PglitePool extends EventEmitter {
      connect(callback: (error: Error | null, client: unknown, release: () => void) => void): void {
        database.session.acquire().then(
          (release) => callback(null, database.sessionClient(), release),
          (error: Error) => callback(error, null, () => undefined),
        );
      }
      end(callback?: (error: Error | null) => void): void {
        callback?.(null);
      }
    }
    return { Pool: PglitePool };
  }

  async close(): Promise<void> {
    await this.session.run(() => this.pg.close());
    this.lock?.release();
  }

  /** A pg-client lookalike for a caller that already holds the session mutex. */
  private sessionClient(): unknown {
    const client = new EventEmitter() as EventEmitter & { query: unknown };
    client.query = (sql: string, paramsOrCallback?: unknown, maybeCallback?: unknown) => {
      const callback = (typeof paramsOrCallback === 'function' ? paramsOrCallback : maybeCallback) as
        | ((error: Error | null, result?: PgLikeResult) => void)
        | undefined;
      const params = Array.isArray(paramsOrCallback) ? paramsOrCallback : undefined;
      const promise = this.run(sql, params);
      if (callback) {
        promise.then((result) => callback(null, result), (error: Error) => callback(error));
        return undefined;
      }
      return promise;
    };
    return client;
  }

  private readonly preparedStatements = new Set<string>();

  /** `begin`: see `run`. */
  private async runPrepared(name: string, sql: string, params: readonly Literal[], begin: boolean): Promise<PgLikeResult> {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`Not a statement name: ${name}`);
    if (!this.preparedStatements.has(name)) {
      await this.pg.exec(`PREPARE ${name} AS ${sql}`, begin);
      this.preparedStatements.add(name);
      begin = false;
    }
    // The generic plan, scoped to this statement: left to choose, the plan cache keeps re-planning the append
    // (a custom plan on every EXECUTE, 60% of its cost). SET is transactional, so a failing EXECUTE's
    // implicit transaction takes the SET back with it; otherwise RESET does.
    const results = await this.pg.exec(`SET plan_cache_mode = force_generic_plan; EXECUTE ${name}(${params.map(quoteLiteral).join(', ')}); RESET plan_cache_mode`, begin);
    const result = results[1];
    return { rows: result?.rows ?? [], rowCount: result?.affectedRows ?? result?.rows.length ?? 0, command: 'EXECUTE' };
  }

  /** `begin`: see `run` (the call is sent before the first await). */
  private async copy(table: string, columns: readonly string[], rows: readonly (readonly CopyValue[])[], begin = false): Promise<void> {
    await this.pg.copy(copyStatement(table, columns), csvRows(rows), begin);
  }

  /**
   * `begin`: this is a transaction's first statement, and the transaction opens with it. The call that
   * carries it must be sent before this returns its promise (no await before it), so that nothing the
   * transaction runs next can reach the engine first.
   */
  private async run(sql: string, params?: readonly unknown[], statementName?: string, begin = false): Promise<PgLikeResult> {
    if (statementName && params?.every(isLiteral)) return this.runPrepared(statementName, sql, params, begin);
    if (params && params.length > 0) {
      const result = await this.pg.query(sql, params, begin);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length, command: commandOf(sql) };
    }
    // Without parameters TypeORM may send several statements at once; PGlite's simple protocol runs them.
    const results = await this.pg.exec(sql, begin);
    const last = results[results.length - 1];
    return {
      rows: last?.rows ?? [],
      rowCount: last?.affectedRows ?? last?.rows.length ?? 0,
      command: commandOf(sql),
    };
  }
}

/**
 * PGlite's API re-parses and re-plans every parameterized statement. A statement it is asked to name
 * (the append, on the hot path) is prepared once in the session with SQL PREPARE and run with EXECUTE;
 * that halves its cost or better. EXECUTE takes no bind parameters, so the values travel as literals —
 * only strings, numbers and nulls, which quote exactly (standard_conforming_strings is on: a quote is
 * doubled, a backslash is literal) — and arrays of strings (the append's event ids), written as an array
 * literal whose elements are double-quoted; anything else takes the ordinary path.
 */
type Scalar = string | number | null;
type Literal = Scalar | readonly string[];

function isScalar(value: unknown): value is Scalar {
  return value === null || (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && !value.includes('\0'));
}

function isLiteral(value: unknown): value is Literal {
  return isScalar(value) || (Array.isArray(value) && value.every((element) => typeof element === 'string' && isScalar(element)));
}

function quoteLiteral(value: Literal): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') return String(value);
  // An untyped '{…}' literal takes the parameter's declared array type (uuid[] for `$4::uuid[]`).
  if (typeof value !== 'string') return quoteString(`{${value.map((element) => `"${element.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`);
  return quoteString(value);
}

function quoteString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

function commandOf(sql: string): string {
  const match = /^\s*(\w+)/.exec(sql);
  return match ? match[1].toUpperCase() : '';
}
