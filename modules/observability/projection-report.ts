import type { ClickHouseConnection } from '../../projections/clickhouse-analytics/index.js';
import {
  checkpointOf, type Database, eventsAfter, lastCovered, type ProjectionHalt, type ProjectionRunner, type RebuildProgress, type SqlEventStore,
} from '../../src/kernel/index.js';

/** A halt as the admin API and `projections status --json` show it. */
export interface HaltView {
  globalPosition: number;
  /** `transactionId:globalPosition`: where the checkpoint stands is just before it. */
  logPosition: string;
  eventId: string;
  eventType: string;
  error: string;
  errorCode: string | null;
  haltedAt: string;
}

/** A rebuild as the admin API and `projections status --json` show it (the latest one of the process that answers). */
export interface RebuildView {
  state: RebuildProgress['state'];
  startedAt: string;
  finishedAt: string | null;
  /** The global position of the last event the replacement has applied. */
  position: number;
  error: string | null;
  failedAt: RebuildProgress['failedAt'];
  replaced: RebuildProgress['replaced'];
}

export interface ProjectionRow {
  name: string;
  kind: 'per-node' | 'singleton';
  position: number;
  /** Events of the projection's types after its checkpoint (null for per-node projections). */
  behind: number | null;
  /** Durable only: stopped at an event it cannot apply (wherever it runs), or null. */
  halted: HaltView | null;
  /** Durable only: the latest rebuild of the process that answers, or null. */
  rebuild: RebuildView | null;
  detail: string;
}

export interface ProjectionReport {
  head: number;
  projections: ProjectionRow[];
  /** Said when the per-node projections are left out: the report comes from a process that is not a node (the CLI on the store directly). */
  note?: string;
}

/** What a report reads: the log, the runner and its tables, and ClickHouse (null without CLICKHOUSE_URL). The platform is one. */
export interface ProjectionSources {
  store: Pick<SqlEventStore, 'headPosition'>;
  runner: ProjectionRunner;
  database: Database;
  clickhouse: ClickHouseConnection | null;
}

/**
 * What `switchyard projections status` prints, and `GET /admin/v1/projections` answers (the CLI asks a
 * running server for it when the embedded store is the server's): every projection's position and lag,
 * and for a durable one whether it is halted (read from `projection_halts`, so a halt shows wherever the
 * projection runs) and how its latest rebuild went. The runner must have started (its status
 * lists the projections).
 */
export async function projectionReport(sources: ProjectionSources): Promise<ProjectionReport> {
  const { database, clickhouse } = sources;
  const head = await sources.store.headPosition();
  const halts = new Map((await sources.runner.halts()).map((halt) => [halt.name, halt]));
  const rows: ProjectionRow[] = [];
  const perNode: string[] = [];
  for (const status of sources.runner.status()) {
    if (status.kind === 'in-memory' && !sources.runner.running) {
      // Only a node holds them: replaying them here would report this process's replay (and resolve provider secrets an operator may not have).
      perNode.push(status.name);
      continue;
    }
    if (status.kind === 'in-memory') {
      rows.push({ name: status.name, kind: 'per-node', position: status.lastGlobalPosition, behind: null, halted: null, rebuild: null, detail: 'rebuilt in memory at every start' });
      continue;
    }
    const checkpoint = await checkpointOf(database, status.name);
    const halt = halts.get(status.name) ?? null;
    const details = halt ? [`HALTED at global position ${halt.position.globalPosition} (${halt.eventType})`] : [];
    details.push(checkpoint ? `checkpoint moved ${checkpoint.updatedAt.toISOString()}` : 'not started');
    if (status.rebuild) details.push(rebuildDetail(status.rebuild));
    if (status.name === 'audit-chain') details.push(await auditDetail(database));
    if (status.name === 'clickhouse-analytics' && clickhouse) {
      const count = await clickhouse
        .rows<{ n: string }>(`SELECT toString(count()) AS n FROM ${clickhouse.table('attempts')}`)
        .then((r) => `ClickHouse ${clickhouse.database}.attempts holds ${r[0]?.n ?? 0} rows`, (e: Error) => `ClickHouse unreachable: ${e.message}`);
      details.push(count);
    }
    rows.push({
      name: status.name,
      kind: 'singleton',
      position: await lastCovered(database, checkpoint?.position ?? null),
      behind: await eventsAfter(database, checkpoint?.position ?? null, status.eventTypes),
      halted: halt ? haltView(halt) : null,
      rebuild: status.rebuild ? rebuildView(status.rebuild) : null,
      detail: details.join('; '),
    });
  }
  if (perNode.length === 0) return { head, projections: rows };
  return { head, projections: rows, note: `${perNode.join(', ')}: per node, rebuilt in memory at every start; each node reports its own (GET /admin/v1/projections)` };
}

/**
 * The human-readable table of a report; each halted projection follows it with the event, the error and
 * what to do, and a rebuild that failed with where it failed.
 */
export function formatProjectionReport(report: ProjectionReport): string {
  let text = `event log head: global position ${report.head}\n`;
  text += `${'projection'.padEnd(22)} ${'kind'.padEnd(10)} ${'position'.padStart(9)} ${'behind'.padStart(8)}  detail\n`;
  for (const row of report.projections) {
    text += `${row.name.padEnd(22)} ${row.kind.padEnd(10)} ${String(row.position).padStart(9)} ${String(row.behind ?? '-').padStart(8)}  ${row.detail}\n`;
  }
  if (report.note) text += `${report.note}\n`;
  for (const row of report.projections) {
    if (!row.halted) continue;
    const h = row.halted;
    text += `\n${row.name} HALTED at global position ${h.globalPosition} (event ${h.eventId}, ${h.eventType}) since ${h.haltedAt}:\n` +
      `  ${h.error}${h.errorCode ? ` [${h.errorCode}]` : ''}\n` +
      `  Every event before it is applied; nothing after it is until the cause is fixed. Then: switchyard projections resume ${row.name}\n`;
  }
  return text;
}

export function haltView(halt: ProjectionHalt): HaltView {
  return {
    globalPosition: halt.position.globalPosition,
    logPosition: `${halt.position.transactionId}:${halt.position.globalPosition}`,
    eventId: halt.eventId,
    eventType: halt.eventType,
    error: halt.error,
    errorCode: halt.errorCode,
    haltedAt: halt.haltedAt.toISOString(),
  };
}

export function rebuildView(rebuild: RebuildProgress): RebuildView {
  return {
    state: rebuild.state,
    startedAt: rebuild.startedAt.toISOString(),
    finishedAt: rebuild.finishedAt?.toISOString() ?? null,
    position: rebuild.position,
    error: rebuild.error,
    failedAt: rebuild.failedAt,
    replaced: rebuild.replaced,
  };
}

function rebuildDetail(rebuild: RebuildProgress): string {
  switch (rebuild.state) {
    case 'replaying':
      return `rebuilding aside: replayed to global position ${rebuild.position}`;
    case 'swapping':
      return 'rebuilding aside: swapping in';
    case 'done':
      return `rebuilt aside ${rebuild.finishedAt!.toISOString()}`;
    case 'failed':
      return `last rebuild failed${rebuild.failedAt ? ` at global position ${rebuild.failedAt.globalPosition} (${rebuild.failedAt.eventType})` : ''}: ${rebuild.error}`;
  }
}

async function auditDetail(database: { query<R>(sql: string, params?: unknown[]): Promise<R[]> }): Promise<string> {
  const [latest] = await database.query<{ sequence: string; global_position: string; signed_at: Date | string }>(
    `SELECT k.sequence::text AS sequence, k.global_position::text AS global_position, k.signed_at FROM audit_checkpoints k ORDER BY k.sequence DESC LIMIT 1`,
  );
  return latest
    ? `latest signed checkpoint: sequence ${latest.sequence} (position ${latest.global_position}, ${new Date(latest.signed_at).toISOString()})`
    : 'no signed checkpoint (SWITCHYARD_AUDIT_SIGNING_KEY unset?)';
}
