import { readEnvironment } from '../../config/environment.js';
import { comparePositions } from '../../kernel/event-store/event-store.js';
import { openPlatform } from '../../platform.js';
import { type ProjectionReport, formatProjectionReport, projectionReport } from '../../projection-report.js';
import { type RunningServer, ServerRefusedError, runningServer } from '../running-server.js';
import type { RebuildStarted } from '../../projections.controller.js';
import { ProgressBar } from '../progress-bar.js';
import { checkpointOf, lastCovered, lastEventFor } from '../projection-positions.js';

/** Gives up waiting for a replay on another node when its checkpoint has not moved for this long. */
const STALL_TIMEOUT_MS = 120_000;

export async function projectionsStatus(options: { json: boolean } = { json: false }): Promise<number> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  let report: ProjectionReport;
  if (server) {
    report = await server.get<ProjectionReport>('/admin/v1/projections');
  } else {
    const platform = await openPlatform(environment, { runDurable: false });
    try {
      await platform.runner.start();
      report = await projectionReport(platform);
    } finally {
      await platform.close();
    }
  }
  process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : formatProjectionReport(report));
  return 0;
}

/**
 * Replays a durable projection from position zero with a progress bar. Without the lease (a server is
 * running), the reset alone is done here and the lease holder replays while it keeps serving; the bar
 * then follows its checkpoint.
 */
export async function projectionsRebuild(name: string): Promise<number> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  if (server) return rebuildThrough(server, name);
  const platform = await openPlatform(environment, { runDurable: true });
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

/**
 * The embedded store belongs to a running server: it resets the projection and replays it while it
 * serves (POST /admin/v1/projections/{name}/rebuild answers once the reset is committed), and the bar
 * follows the projection's position in its report.
 */
async function rebuildThrough(server: RunningServer, name: string): Promise<number> {
  const started = await server.post<RebuildStarted>(`/admin/v1/projections/${encodeURIComponent(name)}/rebuild`, {}).catch((error: unknown) => {
    if (error instanceof ServerRefusedError && error.code === 'unknown_projection') return error;
    throw error;
  });
  if (started instanceof ServerRefusedError) {
    process.stderr.write(`${started.message}\n`);
    return 2;
  }
  const bar = new ProgressBar(`rebuilding ${name}`, 'positions');
  let lastProgress = { covered: -1, at: Date.now() };
  for (;;) {
    const report = await server.get<ProjectionReport>('/admin/v1/projections');
    const covered = report.projections.find((row) => row.name === name)?.position ?? 0;
    if (covered !== lastProgress.covered) lastProgress = { covered, at: Date.now() };
    bar.update(Math.min(covered, started.goal), started.goal);
    if (covered >= started.goal) break;
    if (Date.now() - lastProgress.at > STALL_TIMEOUT_MS) {
      throw new Error(`the server (process ${server.pid}) has not moved the ${name} checkpoint for ${STALL_TIMEOUT_MS / 1000} s; see its log`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  bar.finish(`Rebuilt ${name} from position 0 to ${started.goal} (replayed by the running server, process ${server.pid}).`);
  return 0;
}
