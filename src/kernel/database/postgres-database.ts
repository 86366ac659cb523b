import pg from 'pg';
import type { Database, Lease, SqlExecutor } from './database.js';

/** A real PostgreSQL server through node-postgres: a pool for queries, dedicated sessions for LISTEN and leases. */
export class PostgresDatabase implements Database {
  readonly kind = 'postgres' as const;
  readonly maxConcurrentTransactions: number;
  private readonly pool: pg.Pool;
  private readonly listeners = new Set<pg.Client>();
  private closed = false;

  constructor(private readonly url: string, poolSize = 10) {
    this.maxConcurrentTransactions = poolSize;
    this.pool = new pg.Pool({ connectionString: url, max: poolSize, application_name: 'switchyard' });
    // An idle client that loses its server must not crash the process; the pool replaces it.
    this.pool.on('error', () => undefined);
  }

  async query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    const result = await this.pool.query(sql, params as unknown[]);
    return result.rows as Row[];
  }

  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const tx: SqlExecutor = {
        query: async <Row>(sql: string, params?: readonly unknown[]) =>
          (await client.query(sql, params as unknown[])).rows as Row[],
      };
      const result = await work(tx);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
    let client: pg.Client | null = null;
    let stopped = false;
    const connect = async (): Promise<void> => {
      const next = new pg.Client({ connectionString: this.url, application_name: 'switchyard-listen' });
      next.on('notification', (message) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      });
      next.on('error', () => undefined);
      next.on('end', () => {
        this.listeners.delete(next);
        // Reconnect: notifications sent while disconnected are lost, which the subscribers' polling covers.
        if (!stopped && !this.closed) setTimeout(() => void connect().catch(() => undefined), 500);
      });
      await next.connect();
      await next.query(`LISTEN ${quoteIdentifier(channel)}`);
      client = next;
      this.listeners.add(next);
      if (stopped) await next.end();
    };
    await connect();
    return async () => {
      stopped = true;
      if (client) {
        this.listeners.delete(client);
        await client.end().catch(() => undefined);
      }
    };
  }

  async tryAcquireLease(key: number): Promise<Lease | null> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'switchyard-lease' });
    client.on('error', () => undefined);
    await client.connect();
    const rows = (await client.query('SELECT pg_try_advisory_lock($1) AS acquired', [key])).rows;
    if (!rows[0]?.acquired) {
      await client.end();
      return null;
    }
    const lease = { held: true, release: async () => undefined as void };
    client.on('end', () => (lease.held = false));
    lease.release = async () => {
      if (!lease.held) return;
      lease.held = false;
      await client.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => undefined);
      await client.end().catch(() => undefined);
    };
    return lease;
  }

  typeormDriver(): unknown {
    return undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const client of this.listeners) await client.end().catch(() => undefined);
    await this.pool.end();
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
