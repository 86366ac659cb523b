import { checkpointOf, eventsAfter, lastCovered } from './cli/projection-positions.js';
import type { Platform } from './platform.js';

export interface ProjectionRow {
  name: string;
  kind: 'per-node' | 'singleton';
  position: number;
  /** Events of the projection's types after its checkpoint (null for per-node projections). */
  behind: number | null;
  detail: string;
}

export interface ProjectionReport {
  head: number;
  projections: ProjectionRow[];
}

/**
 * What `switchyard projections status` prints, and `GET /admin/v1/projections` answers (the CLI asks a
 * running server for it when the embedded store is the server's): every projection's position and lag.
 * The platform's runner must have started (its status lists the projections).
 */
export async function projectionReport(platform: Platform): Promise<ProjectionReport> {
  const { database } = platform;
  const head = await platform.store.headPosition();
  const rows: ProjectionRow[] = [];
  for (const status of platform.runner.status()) {
    if (status.kind === 'in-memory') {
      rows.push({ name: status.name, kind: 'per-node', position: status.lastGlobalPosition, behind: null, detail: 'rebuilt in memory at every start' });
      continue;
    }
    const checkpoint = await checkpointOf(database, status.name);
    const details = [checkpoint ? `checkpoint moved ${checkpoint.updatedAt.toISOString()}` : 'not started'];
    if (status.name === 'audit-chain') details.push(await auditDetail(platform.database));
    if (status.name === 'clickhouse-analytics' && platform.clickhouse) {
      const count = await platform.clickhouse
        .rows<{ n: string }>(`SELECT toString(count()) AS n FROM ${platform.clickhouse.table('attempts')}`)
        .then((r) => `ClickHouse ${platform.clickhouse!.database}.attempts holds ${r[0]?.n ?? 0} rows`, (e: Error) => `ClickHouse unreachable: ${e.message}`);
      details.push(count);
    }
    rows.push({
      name: status.name,
      kind: 'singleton',
      position: await lastCovered(database, checkpoint?.position ?? null),
      behind: await eventsAfter(database, checkpoint?.position ?? null, status.eventTypes),
      detail: details.join('; '),
    });
  }
  return { head, projections: rows };
}

/** The human-readable table of a report. */
export function formatProjectionReport(report: ProjectionReport): string {
  let text = `event log head: global position ${report.head}\n`;
  text += `${'projection'.padEnd(22)} ${'kind'.padEnd(10)} ${'position'.padStart(9)} ${'behind'.padStart(8)}  detail\n`;
  for (const row of report.projections) {
    text += `${row.name.padEnd(22)} ${row.kind.padEnd(10)} ${String(row.position).padStart(9)} ${String(row.behind ?? '-').padStart(8)}  ${row.detail}\n`;
  }
  return text;
}

async function auditDetail(database: { query<R>(sql: string, params?: unknown[]): Promise<R[]> }): Promise<string> {
  const [latest] = await database.query<{ sequence: string; global_position: string; signed_at: Date | string }>(
    `SELECT k.sequence::text AS sequence, k.global_position::text AS global_position, k.signed_at FROM audit_checkpoints k ORDER BY k.sequence DESC LIMIT 1`,
  );
  return latest
    ? `latest signed checkpoint: sequence ${latest.sequence} (position ${latest.global_position}, ${new Date(latest.signed_at).toISOString()})`
    : 'no signed checkpoint (SWITCHYARD_AUDIT_SIGNING_KEY unset?)';
}
