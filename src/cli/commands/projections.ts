import { readEnvironment } from '../../config/environment.js';
import { comparePositions } from '../../kernel/event-store/event-store.js';
import { openPlatform } from '../../platform.js';
import { ProgressBar } from '../progress-bar.js';
import { checkpointOf, eventsAfter, lastCovered, lastEventFor } from '../projection-positions.js';

/** Gives up waiting for a replay on another node when its checkpoint has not moved for this long. */
const STALL_TIMEOUT_MS = 120_000;

export async function projectionsStatus(options: { json: boolean } = { json: false }): Promise<number> {
  const platform = await openPlatform(readEnvironment(), { runDurable: false });
  try {
    await platform.runner.start();
    const { database } = platform;
    const head = await platform.store.headPosition();
    const rows: Array<Record<string, unknown>> = [];
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
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ head, projections: rows })}\n`);
      return 0;
    }
    process.stdout.write(`event log head: global position ${head}\n`);
    process.stdout.write(`${'projection'.padEnd(22)} ${'kind'.padEnd(10)} ${'position'.padStart(9)} ${'behind'.padStart(8)}  detail\n`);
    for (const row of rows) {
      process.stdout.write(`${String(row.name).padEnd(22)} ${String(row.kind).padEnd(10)} ${String(row.position).padStart(9)} ${String(row.behind ?? '-').padStart(8)}  ${row.detail}\n`);
    }
    return 0;
  } finally {
    await platform.close();
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

/**
 * Replays a durable projection from position zero with a progress bar. Without the lease (a server is
 * running), the reset alone is done here and the lease holder replays while it keeps serving; the bar
 * then follows its checkpoint.
 */
export async function projectionsRebuild(name: string): Promise<number> {
  const platform = await openPlatform(readEnvironment(), { runDurable: true });
  try {
    const durable = platform.runner.status().filter((s) => s.kind === 'durable');
    const status = durable.find((s) => s.name === name);
    if (!status) {
      process.stderr.write(`Unknown projection '${name}'. Rebuildable: ${durable.map((s) => s.name).join(', ')} ` +
        `(cost-ledger includes tenant spend; per-node projections rebuild at every start).\n`);
      return 2;
    }
    const { database } = platform;
    const target = await lastEventFor(database, status.eventTypes);
    const goal = target?.globalPosition ?? 0;
    const bar = new ProgressBar(`rebuilding ${name}`, 'positions');
    let polling = true;
    let lastProgress = { covered: -1, at: Date.now() };
    const covered = async () => lastCovered(database, (await checkpointOf(database, name))?.position ?? null);
    // Until the reset is seen, the stored checkpoint is the old one: show 0 rather than a false 100%.
    const before = await covered();
    let resetSeen = before === 0;
    const poll = (async () => {
      while (polling) {
        const done = await covered().catch(() => lastProgress.covered);
        if (done < before) resetSeen = true;
        if (done !== lastProgress.covered) lastProgress = { covered: done, at: Date.now() };
        bar.update(resetSeen ? Math.min(Math.max(0, done), goal) : 0, goal);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    try {
      await platform.runner.rebuild(name);
      const local = platform.runner.status().find((s) => s.name === name)!.leaseHeld;
      if (!local && target) {
        // Another node holds the lease: it saw the reset checkpoint and replays; follow it.
        for (;;) {
          const checkpoint = await checkpointOf(database, name);
          if (checkpoint && comparePositions(checkpoint.position, target) >= 0) break;
          if (Date.now() - lastProgress.at > STALL_TIMEOUT_MS) {
            throw new Error(`the node holding the ${name} lease has not moved its checkpoint for ${STALL_TIMEOUT_MS / 1000} s; is it running?`);
          }
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }
      polling = false;
      await poll;
      bar.update(goal, goal);
      bar.finish(`Rebuilt ${name} from position 0 to ${goal}${local ? '' : ' (replayed by the node holding its lease)'}.`);
      return 0;
    } finally {
      polling = false;
      await poll;
    }
  } finally {
    await platform.close();
  }
}
