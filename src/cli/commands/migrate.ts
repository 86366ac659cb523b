import { readEnvironment } from '../../config/environment.js';
import { OutageSpool } from '../../kernel/event-store/spool/outage-spool.js';
import { defaultSpoolSettings, spoolStoreKey } from '../../kernel/event-store/spool/spool-settings.js';
import { type MigrationReport, migrateStore } from '../../migrate/migrate-store.js';
import { MOVED_MARK_FILE } from '../../migrate/moved-store-mark.js';
import { MigrationRefusedError, type StoreEndpoint, endpointLabel } from '../../migrate/store-endpoint.js';
import { writeOut } from '../output.js';
import { ProgressBar } from '../progress-bar.js';

/**
 * `switchyard migrate --to URL | --to-data-dir PATH`: moves the current store (the embedded one in
 * SWITCHYARD_DATA_DIR, or DATABASE_URL's) into an empty database and verifies it (docs/operations.md,
 * "Moving from the embedded store to PostgreSQL"). Phases and progress go to stderr, the summary to stdout.
 */
export async function migrateCommand(options: { target: StoreEndpoint; json: boolean }): Promise<number> {
  const environment = readEnvironment();
  if (!environment.databaseUrl && environment.dataDir === ':memory:') {
    process.stderr.write('SWITCHYARD_DATA_DIR is :memory:, which keeps nothing to migrate.\n');
    return 1;
  }
  const source: StoreEndpoint = environment.databaseUrl ? { kind: 'postgres', url: environment.databaseUrl } : { kind: 'pglite', dataDir: environment.dataDir };
  if (environment.databaseUrl) {
    // Answered requests a node spooled during an outage are not in the log yet: they drain into the store they
    // were written for, which is the source, never the target.
    const spool = environment.spool ?? defaultSpoolSettings(environment.dataDir);
    const spooled = OutageSpool.spooledBytes(spool, spoolStoreKey(environment.databaseUrl));
    if (spooled > 0) {
      process.stderr.write(
        `switchyard migrate: the outage spool in ${spool.directory} holds ${spooled} bytes of answered requests that are not in the source's log yet. ` +
          `Start a gateway on the source once so that it drains them (its log says when), stop it, then migrate.\n`,
      );
      return 1;
    }
  }
  let bar: ProgressBar | null = null;
  let report: MigrationReport;
  try {
    process.stderr.write(`Migrating ${endpointLabel(source)} to ${endpointLabel(options.target)}\n`);
    report = await migrateStore({
      source,
      target: options.target,
      onPhase: (message) => {
        // A bar redrawn in place on a terminal ends its line; elsewhere each update was a line already.
        if (bar && process.stderr.isTTY) process.stderr.write('\n');
        bar = null;
        process.stderr.write(`${message}\n`);
      },
      onProgress: (done, total) => {
        bar ??= new ProgressBar('  ', 'done');
        bar.update(done, total);
      },
    });
    if (bar && process.stderr.isTTY) process.stderr.write('\n');
  } catch (error) {
    if (!(error instanceof MigrationRefusedError)) throw error;
    process.stderr.write(`switchyard migrate: ${error.message}\n`);
    return 1;
  }
  await writeOut(options.json ? `${JSON.stringify(report)}\n` : summary(report));
  return report.ok ? 0 : 1;
}

function summary(report: MigrationReport): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const lines = [
    report.ok
      ? `Migrated ${report.source} to ${report.target} in ${report.seconds.toFixed(1)} s.`
      : `The migration to ${report.target} did NOT verify: the target differs from the source (see below). It is left marked as unfinished, so no server starts on it.`,
    `  events: ${n(report.events)} in ${n(report.streams)} streams, last position ${report.lastPosition ?? 'none'} ` +
      `(${report.resumed ? `resumed an interrupted run; copied ${n(report.copiedNow)} now` : `copied ${n(report.copiedNow)}`})`,
    `  outside the log: ${n(report.adminTokens)} admin token(s), ${n(report.auditCheckpoints)} signed audit checkpoint(s) copied`,
    `  transaction ids used up on the target to order new events after the log: ${n(report.transactionIdsTaken)}`,
    'verification (source → target):',
    ...report.checks.map((check) =>
      `  ${check.ok ? 'OK      ' : 'MISMATCH'} ${check.name}: ${check.ok ? check.target : `source ${check.source}; target ${check.target}${check.detail ? ` (${check.detail})` : ''}`}`),
    ...(report.sourceMarkedMoved
      ? [
        `The source (${report.source}) is now marked as moved (${MOVED_MARK_FILE} in it): a server or command started without`,
        `DATABASE_URL refuses it instead of using it. Set DATABASE_URL to the target for the gateway and for every switchyard command from now on.`,
      ]
      : []),
  ];
  return `${lines.join('\n')}\n`;
}
