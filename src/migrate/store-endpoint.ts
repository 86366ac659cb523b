import pg from 'pg';
import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { DataSource } from 'typeorm';
import { CostLedgerEntry } from '../../projections/cost-ledger/index.js';
import { TenantSpend } from '../../projections/tenant-spend/index.js';
import type { Database } from '../kernel/database/database.js';
import { migrate, openDataSource } from '../kernel/database/data-source.js';
import { DataDirLock } from '../kernel/database/data-dir-lock.js';
import { openDatabase } from '../kernel/database/open-database.js';
import { MOVED_MARK_FILE, readMovedMark } from './moved-store-mark.js';

/** One end of a migration: a PostgreSQL database by URL, or an embedded (PGlite) data directory. */
export type StoreEndpoint = { kind: 'postgres'; url: string } | { kind: 'pglite'; dataDir: string };

/** An opened endpoint. */
export interface OpenedStore {
  endpoint: StoreEndpoint;
  database: Database;
  /** Brings the schema up to date (a new target gets every table here), as a server's start would. */
  applySchema(): Promise<void>;
  close(): Promise<void>;
}

/** A refusal that changes nothing: said as it stands, exit 1. */
export class MigrationRefusedError extends Error {
  override readonly name = 'MigrationRefusedError';
}

/** The endpoint as printed: a URL without its password, or the directory's absolute path. */
export function endpointLabel(endpoint: StoreEndpoint): string {
  if (endpoint.kind === 'pglite') return `the embedded store in ${resolve(endpoint.dataDir)}`;
  try {
    const url = new URL(endpoint.url);
    url.password = '';
    // The query can carry a password too (`?password=`, `?sslpassword=`, as node-postgres reads them): none of it
    // is printed, nor kept in a moved store's mark.
    url.search = '';
    return `PostgreSQL ${url.toString().replace(/:@/, '@')}`;
  } catch {
    return 'PostgreSQL (DATABASE_URL)';
  }
}

/**
 * Refuses to read a source that was moved already (an embedded store `migrate` marked), or one a Switchyard server is using: it could append while the log is copied, and
 * what it appended after the copy passed would be left behind. The embedded store's lock names the process;
 * on PostgreSQL every Switchyard session (server, projector, CLI command) names itself `switchyard`.
 */
export async function refuseIfServed(endpoint: StoreEndpoint): Promise<void> {
  if (endpoint.kind === 'pglite') {
    const moved = readMovedMark(endpoint.dataDir);
    if (moved) {
      throw new MigrationRefusedError(
        `${endpointLabel(endpoint)} was moved to ${moved.to} already (${moved.movedAt}): the log is there now. ` +
          `To copy this store again anyway, delete ${join(resolve(endpoint.dataDir), MOVED_MARK_FILE)} first.`,
      );
    }
    const owner = DataDirLock.owner(endpoint.dataDir);
    if (owner !== null) {
      throw new MigrationRefusedError(
        `${endpointLabel(endpoint)} is in use by process ${owner} (a running server or another command). Stop the server first, then run switchyard migrate again.`,
      );
    }
    return;
  }
  const client = new pg.Client({ connectionString: endpoint.url, application_name: 'switchyard-migrate' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND application_name IN ('switchyard', 'switchyard-lease') AND pid <> pg_backend_pid()`,
    );
    if (rows[0].n > 0) {
      throw new MigrationRefusedError(
        `${rows[0].n} Switchyard session(s) are connected to ${endpointLabel(endpoint)} (a server, projector or CLI command): ` +
          `stop every server and projector on it first, so that nothing is appended while the log is copied, then run switchyard migrate again.`,
      );
    }
  } finally {
    await client.end();
  }
}

/** Opens the endpoint as it is: nothing is created or changed until `applySchema`. */
export async function openEndpoint(endpoint: StoreEndpoint): Promise<OpenedStore> {
  const database = endpoint.kind === 'postgres'
    ? await openDatabase({ databaseUrl: endpoint.url, dataDir: null })
    : await openDatabase({ databaseUrl: null, dataDir: endpoint.dataDir });
  let dataSource: DataSource | null = null;
  return {
    endpoint,
    database,
    async applySchema() {
      dataSource ??= await openDataSource(database, endpoint.kind === 'postgres' ? endpoint.url : null, [CostLedgerEntry, TenantSpend]);
      await migrate(database, dataSource);
    },
    async close() {
      await dataSource?.destroy().catch(() => undefined);
      await database.close();
    },
  };
}

/**
 * What makes two opened endpoints the same database: for PostgreSQL the server (its start time, to the
 * microsecond) and the database (oid and name), however the URLs spell the host; for the embedded store
 * the directory's real path.
 */
export async function storeIdentity(store: OpenedStore): Promise<string> {
  if (store.endpoint.kind === 'pglite') return `pglite:${realpathSync(store.endpoint.dataDir)}`;
  const [row] = await store.database.query<{ id: string }>(
    `SELECT pg_postmaster_start_time()::text || '/' || d.oid::text || '/' || d.datname AS id FROM pg_database d WHERE d.datname = current_database()`,
  );
  return `postgres:${row.id}`;
}
