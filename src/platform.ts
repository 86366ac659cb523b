import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { upcasters } from '../events/upcasters.js';
import { providerSettingsProblem } from '../modules/catalog/index.js';
import { AuditChainProjection, type CheckpointSigner, openCheckpointSigner, readAuditSettings } from '../projections/audit-chain/index.js';
import { analyticsFaults, analyticsFeed, ClickHouseAnalyticsProjection, ClickHouseConnection, clickHouseSettings } from '../projections/clickhouse-analytics/index.js';
import { CostLedgerEntry, CostLedgerProjection } from '../projections/cost-ledger/index.js';
import { KeyIndexProjection } from '../projections/key-index/index.js';
import { RequestSummariesProjection } from '../projections/request-summaries/index.js';
import { RoutingSnapshotProjection } from '../projections/routing-snapshot/index.js';
import { TenantSpend } from '../projections/tenant-spend/index.js';
import { openRelay, readRelaySettings, type RelayProjection } from '../modules/relay/index.js';
import type { Environment } from './config/environment.js';
import type { Database } from './kernel/database/database.js';
import { migrate, openDataSource } from './kernel/database/data-source.js';
import { openDatabase } from './kernel/database/open-database.js';
import { CommandExecutor } from './kernel/commands/command-executor.js';
import { GroupCommitter } from './kernel/event-store/group-committer.js';
import { checkLogBehindTransactionCounter } from './kernel/event-store/transaction-counter.js';
import { checkNoMigrationInProgress } from './migrate/migration-marker.js';
import { refuseMovedStore } from './migrate/moved-store-mark.js';
import { SqlEventStore } from './kernel/event-store/sql-event-store.js';
import { OutageSpool } from './kernel/event-store/spool/outage-spool.js';
import { SpoolDrainer } from './kernel/event-store/spool/spool-drainer.js';
import { defaultSpoolSettings, spoolStoreKey } from './kernel/event-store/spool/spool-settings.js';
import { ProjectionRunner } from './kernel/projections/projection-runner.js';
import { guardProcessSecrets } from './log-reader.js';

/** TypeORM entities of the durable read models (`projection_checkpoints` is the kernel's own, written in SQL). */
export const ENTITIES = [CostLedgerEntry, TenantSpend];

/** The platform kernel, opened before NestJS wires the modules around it. */
export interface Platform {
  environment: Environment;
  database: Database;
  dataSource: DataSource;
  store: SqlEventStore;
  committer: GroupCommitter;
  executor: CommandExecutor;
  runner: ProjectionRunner;
  routing: RoutingSnapshotProjection;
  keys: KeyIndexProjection;
  /** Signs audit checkpoints; null without SWITCHYARD_AUDIT_SIGNING_KEY. */
  auditSigner: CheckpointSigner | null;
  /** The ClickHouse analytics store and its projection; null without CLICKHOUSE_URL. */
  clickhouse: ClickHouseConnection | null;
  analytics: ClickHouseAnalyticsProjection | null;
  /** The relay publishing the log to SWITCHYARD_RELAY_URL's broker (docs/events-out.md); null when unset. */
  relay: RelayProjection | null;
  /** The outage spool of a serving process on PostgreSQL (null on PGlite, in other processes, or when disabled); `spoolBytes()` is its depth. */
  spool: OutageSpool | null;
  close(): Promise<void>;
}

export interface PlatformOptions {
  /** Run singleton projections (ledger, spend, audit chain, analytics) in this process. */
  runDurable: boolean;
  /** Serve through PostgreSQL outages with a local write-ahead spool (serving processes only). */
  spool?: boolean;
}

export async function openPlatform(environment: Environment, options: PlatformOptions): Promise<Platform> {
  const logger = new Logger('Platform');
  guardProcessSecrets(environment);
  // Then settings: a bad signing key (or one the policy forbids) or ClickHouse URL stops the start before anything is opened.
  const auditSettings = environment.audit ?? readAuditSettings(process.env);
  const auditSigner = openCheckpointSigner(auditSettings);
  const chSettings = environment.clickhouseUrl ? clickHouseSettings(environment.clickhouseUrl) : null;
  const feed = analyticsFeed(process.env);
  const relaySettings = readRelaySettings(process.env);
  const dataDir = environment.databaseUrl || environment.dataDir === ':memory:' ? null : environment.dataDir;
  // An embedded store moved to PostgreSQL is not the log any more: a server started on it would serve stale keys.
  if (dataDir) refuseMovedStore(dataDir);
  const database = await openDatabase({ databaseUrl: environment.databaseUrl, dataDir });
  let dataSource: DataSource | null = null;
  try {
    dataSource = await openDataSource(database, environment.databaseUrl, ENTITIES);
    const applied = await migrate(database, dataSource);
    if (applied.length) logger.log(`applied migrations: ${applied.join(', ')}`);
    // A store a `switchyard migrate` is still filling, or a log restored behind its server's transaction
    // counter, would serve an incomplete or misordered log: neither starts.
    await checkNoMigrationInProgress(database);
    await checkLogBehindTransactionCounter(database);
  } catch (error) {
    await dataSource?.destroy().catch(() => undefined);
    await database.close().catch(() => undefined);
    throw error;
  }
  // The embedded engine's data directory is this process's alone (DataDirLock): it is the log's only writer,
  // so its projections take the events it just appended from memory instead of reading them back.
  const store = new SqlEventStore(database, upcasters.upcast, { soleWriter: database.kind === 'pglite' });
  // Only a real server can go away while the process lives on; PGlite is the process's own.
  const spoolSettings = environment.spool ?? defaultSpoolSettings(environment.dataDir);
  let spool: OutageSpool | null = null;
  if (options.spool && environment.databaseUrl && spoolSettings.maxBytes > 0) {
    try {
      spool = OutageSpool.open(spoolSettings, spoolStoreKey(environment.databaseUrl));
    } catch (error) {
      await dataSource.destroy().catch(() => undefined);
      await database.close().catch(() => undefined);
      throw new Error(`The outage spool cannot be opened in ${spoolSettings.directory} (SWITCHYARD_SPOOL_DIR): ${(error as Error).message}`);
    }
  }
  const drainer = spool ? new SpoolDrainer(store, spool) : null;
  drainer?.start();
  const committer = new GroupCommitter(store, {
    spool,
    maxBatchEvents: 500,
    maxBatchBytes: 2 * 1024 * 1024,
    maxDelayMs: 0,
    notifyIntervalMs: 25,
    // One batch commits at a time; the appends queued meanwhile leave together the moment it is done.
    // Up to four at once (the earlier default) made batches of ~7 requests at c=32 where one makes ~12
    // (350 commits a second against 230), and each paid a batch's fixed cost (round trip, plan, commit,
    // WAL flush): alternating runs on two cores gave −18% CPU per request (PostgreSQL −25%), +16%
    // throughput at c=32, and no worse latency at 300 or 1,000 rps (bench/PROFILE.md, stop 30).
    maxInFlight: 1,
  });
  const routing = new RoutingSnapshotProjection(providerSettingsProblem);
  const keys = new KeyIndexProjection();
  const runner = new ProjectionRunner(store, database, {
    pollIntervalMs: environment.pollIntervalMs,
    listen: environment.listen,
    batchSize: 500,
    runDurable: options.runDurable,
  });
  runner.addInMemory(routing);
  runner.addInMemory(keys);
  runner.addDurable(new CostLedgerProjection());
  runner.addDurable(new RequestSummariesProjection());
  runner.addDurable(new AuditChainProjection(auditSigner, auditSettings.checkpointIntervalMs));
  const clickhouse = chSettings ? new ClickHouseConnection(chSettings) : null;
  // SWITCHYARD_ANALYTICS_FEED=broker: `switchyard consume clickhouse-analytics` writes the rows from the relay;
  // this process must not write them too (ClickHouse only serves the analytics API here).
  const analytics = clickhouse && feed === 'log' ? new ClickHouseAnalyticsProjection(clickhouse, analyticsFaults(process.env)) : null;
  if (clickhouse && feed === 'broker' && !relaySettings && options.runDurable) {
    logger.warn('SWITCHYARD_ANALYTICS_FEED=broker without SWITCHYARD_RELAY_URL: nothing publishes the events `switchyard consume clickhouse-analytics` writes to ClickHouse');
  }
  if (analytics) {
    runner.addDurable(analytics);
    // Schema at start; ClickHouse being down must not stop serving: the projection retries on its next batch.
    if (options.runDurable) {
      await analytics.prepare().catch((error: Error) => logger.warn(`ClickHouse is not reachable yet (${error.message}); analytics will catch up when it is`));
    }
  }
  // Unset, nothing of the relay exists: no worker, no connection, no work per request.
  const relay = relaySettings ? openRelay(relaySettings) : null;
  if (relay && relaySettings) {
    runner.addDurable(relay);
    if (options.runDurable) {
      logger.log(`relay: publishing ${relaySettings.eventsDescription === 'all' ? 'every event' : relaySettings.eventsDescription} to ${relaySettings.transport} at ${relaySettings.servers.join(',')} ` +
        `(one publisher per installation: the node holding the lease)`);
    }
  }
  const executor = new CommandExecutor(store);
  const openedDataSource = dataSource;
  return {
    environment, database, dataSource: openedDataSource, store, committer, executor, runner, routing, keys,
    auditSigner, clickhouse, analytics, relay, spool,
    async close() {
      await drainer?.stop();
      await committer.drain();
      // What the spool holds goes into the log now if the store answers; otherwise the next start drains it.
      if (drainer) await drainer.drain().catch(() => false);
      await spool?.close().catch(() => undefined);
      await runner.stop();
      await clickhouse?.close().catch(() => undefined);
      await relay?.close();
      await openedDataSource.destroy().catch(() => undefined);
      await database.close();
    },
  };
}
