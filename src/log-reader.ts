import { upcasters } from '../events/upcasters.js';
import { postgresMigrations } from '../migrations/postgres/index.js';
import { type CheckpointSigner, openCheckpointSigner, readAuditSettings } from '../projections/audit-chain/index.js';
import type { Environment } from './config/environment.js';
import type { Database } from './kernel/database/database.js';
import { openDatabase } from './kernel/database/open-database.js';
import { SqlEventStore } from './kernel/event-store/sql-event-store.js';
import { checkLogBehindTransactionCounter } from './kernel/event-store/transaction-counter.js';
import { checkNoMigrationInProgress } from './migrate/migration-marker.js';
import { refuseMovedStore } from './migrate/moved-store-mark.js';
import { rememberSecret, rememberUrlCredentials } from './kernel/secret-references/known-secrets.js';
import { installSecretReferencePolicy } from './kernel/secret-references/secret-reference.js';
import { secretReferencePolicy } from './kernel/secret-references/secret-reference-policy.js';

/**
 * What the read-only commands open (`events`, `requests show`, `audit …`): the database and the log, and the
 * audit signer for checkpoints — no projections, no command side, no provider secrets resolved, and TypeORM
 * only when the schema needs migrating. The full platform (openPlatform) cost each such command about half a
 * second more, and building the routing snapshot resolved provider credentials an auditor does not have.
 */
export interface LogReader {
  environment: Environment;
  database: Database;
  store: SqlEventStore;
  /** Signs and verifies audit checkpoints; null without SWITCHYARD_AUDIT_SIGNING_KEY. */
  auditSigner: CheckpointSigner | null;
  close(): Promise<void>;
}

/**
 * Before anything resolves a reference: what references may read, and the gateway's own secrets, which no text
 * from outside may carry back to a client. Every process that opens the store does this first.
 */
export function guardProcessSecrets(environment: Environment): void {
  installSecretReferencePolicy(environment.secretReferences ?? secretReferencePolicy(process.env, environment.dataDir));
  rememberSecret(environment.adminToken);
  for (const url of [environment.databaseUrl, environment.redisUrl, environment.clickhouseUrl]) rememberUrlCredentials(url);
}

export async function openLogReader(environment: Environment): Promise<LogReader> {
  guardProcessSecrets(environment);
  const auditSigner = openCheckpointSigner(environment.audit ?? readAuditSettings(process.env));
  const dataDir = environment.databaseUrl || environment.dataDir === ':memory:' ? null : environment.dataDir;
  // A command on an embedded store moved to PostgreSQL would read, or write, what the gateway no longer serves.
  if (dataDir) refuseMovedStore(dataDir);
  const database = await openDatabase({ databaseUrl: environment.databaseUrl, dataDir });
  try {
    if (await schemaBehind(database)) {
      // A new data directory, or one an older release wrote: migrate as a serving start would (TypeORM runs them).
      const { migrate, openDataSource } = await import('./kernel/database/data-source.js');
      const dataSource = await openDataSource(database, environment.databaseUrl, []);
      try {
        await migrate(database, dataSource);
      } finally {
        await dataSource.destroy().catch(() => undefined);
      }
    }
    // A store a `switchyard migrate` is still filling holds part of a log, and a log restored behind its server's
    // transaction counter is invisible to the log's readers (they stop below the oldest running transaction):
    // an answer from either would mislead, so they are refused here as at a server's start.
    await checkNoMigrationInProgress(database);
    await checkLogBehindTransactionCounter(database);
  } catch (error) {
    await database.close().catch(() => undefined);
    throw error;
  }
  const store = new SqlEventStore(database, upcasters.upcast, { soleWriter: false });
  return { environment, database, store, auditSigner, close: () => database.close() };
}

/** Whether a migration this build knows is not recorded in the database (or the database has none yet). */
async function schemaBehind(database: Database): Promise<boolean> {
  const [{ present }] = await database.query<{ present: boolean }>(`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`);
  if (!present) return true;
  const applied = new Set((await database.query<{ name: string }>('SELECT name FROM schema_migrations')).map((row) => row.name));
  return postgresMigrations.some((migration) => !applied.has(new migration().name));
}
