import pg from 'pg';
import { readStat } from './proc.js';

/**
 * Finds the PostgreSQL processes whose CPU a Switchyard run causes, for /proc accounting:
 * - backends: every process pg_stat_activity lists for the run's own database (the gateway's pool
 *   connections, LISTEN connection, autovacuum workers on its tables). The run's database is used by
 *   nothing else, so this is attributable, even on a server other engineers share.
 * - background: the server-wide processes (WAL writer, checkpointer, background writer, …). Their work
 *   is partly the run's (WAL flushes of its commits) and partly any other database's, so it is reported
 *   apart and not added to the per-request figure.
 * The monitoring connection itself is on another database and is never counted, nor are the bench's
 * own connections to the run's database (`leaveOut`). Works only when the
 * server runs on this machine (its pids must be in /proc); otherwise `local` is false.
 */
export class PostgresBackends {
  private readonly benchPids = new Set<number>();

  private constructor(
    private readonly monitor: pg.Client,
    readonly database: string,
    readonly local: boolean,
  ) {}

  static async open(adminUrl: string, database: string): Promise<PostgresBackends> {
    const monitor = new pg.Client({ connectionString: adminUrl });
    await monitor.connect();
    const own = await monitor.query<{ pid: number }>('select pg_backend_pid() as pid');
    const stat = readStat(own.rows[0].pid);
    return new PostgresBackends(monitor, database, stat !== null);
  }

  /** A backend of the bench's own (the projection-lag reader) on the run's database: not the target's CPU. */
  leaveOut(pid: number): void {
    this.benchPids.add(pid);
  }

  async backendPids(): Promise<number[]> {
    if (!this.local) return [];
    const result = await this.monitor.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [this.database]);
    return result.rows.map((row) => row.pid).filter((pid) => !this.benchPids.has(pid));
  }

  async backgroundPids(): Promise<number[]> {
    if (!this.local) return [];
    const result = await this.monitor.query<{ pid: number }>(
      "select pid from pg_stat_activity where datname is null and backend_type not in ('client backend', 'walsender')",
    );
    return result.rows.map((row) => row.pid);
  }

  async close(): Promise<void> {
    await this.monitor.end();
  }
}
