import pg from 'pg';
import { describeDatabaseError } from './connection-loss.js';
import { type Database, type DatabaseHealth, type Lease, type SqlExecutor, type TransactionOptions, type TransactionWork, searchPathStatement } from './database.js';
import { PostgresListenSession } from './postgres-listen-session.js';

/** How long a new connection may take before the attempt fails (instead of waiting for ever on a dead server). */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * A real PostgreSQL server through node-postgres: a pool for queries, dedicated sessions for LISTEN and
 * leases. Every client has an error listener at every moment of its life — idle in the pool (the pool's),
 * checked out for a transaction (ours), LISTEN and lease sessions (theirs) — because node-postgres emits
 * 'error' when a server drops a connection, and an unheard 'error' ends the process. A lost connection
 * fails only the statements that were running on it.
 */
export class PostgresDatabase implements Database {
  readonly kind = 'postgres' as const;
  readonly maxConcurrentTransactions: number;
  private readonly pool: pg.Pool;
  private readonly listeners = new Set<PostgresListenSession>();
  private readonly leases = new Set<pg.Client>();

  constructor(private readonly url: string, poolSize = 10) {
    this.maxConcurrentTransactions = poolSize;
    this.pool = new pg.Pool({
      connectionString: url,
      max: poolSize,
      application_name: 'switchyard',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    // An idle client that loses its server: the pool drops it and opens a new one when next needed.
    this.pool.on('error', () => undefined);
  }

  async query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[], statementName?: string): Promise<Row[]> {
    const values = params as unknown[] | undefined;
    const result = await this.pool.query(statementName ? { name: statementName, text: sql, values } : { text: sql, values });
    return result.rows as Row[];
  }

  async transaction<T>(work: TransactionWork<T>, options?: TransactionOptions): Promise<T> {
    const client = await this.pool.connect();
    // Checked out, the client is no longer covered by the pool's idle listener (pg-pool removes it).
    let lost: Error | undefined;
    const onError = (error: Error) => (lost ??= error);
    client.on('error', onError);
    let broken: Error | undefined;
    try {
      // One round trip whatever the options: the simple protocol runs every statement of the string, and
      // an error stops the rest of it (a failed `closing` never reaches its COMMIT).
      let begin = options?.flush === 'background' ? 'BEGIN; SET LOCAL synchronous_commit TO off' : 'BEGIN';
      if (options?.searchPath) begin += `; ${searchPathStatement(options.searchPath)}`;
      const opening: unknown = await client.query(options?.opening ? `${begin}; ${options.opening}` : begin);
      const tx: SqlExecutor = {
        query: async <Row>(sql: string, params?: readonly unknown[], statementName?: string) => {
          const values = params as unknown[] | undefined;
          const result = await client.query(statementName ? { name: statementName, text: sql, values } : { text: sql, values });
          return result.rows as Row[];
        },
      };
      const result = await work(tx, options?.opening ? lastRows(opening) : []);
      await client.query(options?.closing ? `${options.closing}; COMMIT` : 'COMMIT');
      return result;
    } catch (error) {
      if (!lost) await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw error;
    } finally {
      client.removeListener('error', onError);
      // A client that lost its connection (or could not roll back) is destroyed, not returned to the pool.
      client.release(lost ?? broken);
    }
  }

  async listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
    const session = new PostgresListenSession(this.url, channel, onNotify);
    await session.start();
    this.listeners.add(session);
    return async () => {
      this.listeners.delete(session);
      await session.stop();
    };
  }

  async tryAcquireLease(key: number): Promise<Lease | null> {
    const client = new pg.Client({
      connectionString: this.url, application_name: 'switchyard-lease', keepAlive: true, connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    const lease = { held: false, release: async () => undefined as void };
    // The lease lives exactly as long as its session: the server releases the advisory lock when the
    // session ends, so a lost connection means another node may take over.
    const lost = () => {
      lease.held = false;
      this.leases.delete(client);
    };
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      const rows = (await client.query('SELECT pg_try_advisory_lock($1) AS acquired', [key])).rows;
      if (!rows[0]?.acquired) {
        await client.end().catch(() => undefined);
        return null;
      }
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    lease.held = true;
    this.leases.add(client);
    lease.release = async () => {
      if (!lease.held) return;
      lease.held = false;
      this.leases.delete(client);
      await client.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => undefined);
      await client.end().catch(() => undefined);
    };
    return lease;
  }

  async checkHealth(timeoutMs: number): Promise<DatabaseHealth> {
    const problems: string[] = [];
    let reachable = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.pool.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (error) {
      reachable = false;
      problems.push(`queries: ${describeDatabaseError(error)}`);
    } finally {
      clearTimeout(timer);
    }
    for (const session of this.listeners) {
      if (!session.listening) problems.push(`notifications: reconnecting for ${Math.round(session.downForMs / 1000)} s`);
    }
    return { reachable, problems };
  }

  typeormDriver(): unknown {
    return undefined;
  }

  async close(): Promise<void> {
    for (const session of this.listeners) await session.stop();
    this.listeners.clear();
    for (const client of this.leases) await client.end().catch(() => undefined);
    await this.pool.end();
  }
}

/** The rows of a simple query's last statement (node-postgres gives one result per statement of the string). */
function lastRows(result: unknown): Array<Record<string, unknown>> {
  const results = (Array.isArray(result) ? result : [result]) as pg.QueryResult[];
  return results[results.length - 1]?.rows ?? [];
}
