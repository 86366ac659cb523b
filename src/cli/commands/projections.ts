import { readEnvironment } from '../../config/environment.js';
import { lastEventFor, RebuildFailedError } from '../../kernel/index.js';
import { openPlatform } from '../../platform.js';
import { type ProjectionReport, formatProjectionReport, projectionReport } from '../../../modules/observability/projection-report.js';
import { type ResumeOutcome, describeResume, resumeProjection } from '../../../modules/observability/projection-resume.js';
import type { RebuildStarted } from '../../../modules/observability/projections.controller.js';
import { type RunningServer, ServerRefusedError, runningServer } from '../running-server.js';
import { ProgressBar } from '../progress-bar.js';

/** Gives up waiting for a replay on the server when its position has not moved for this long. */
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
      // The runner is not started: the durable projections' checkpoints and halts are in the database, and the
      // per-node ones belong to the nodes (the report says so).
      report = await projectionReport(platform);
    } finally {
      await platform.close();
    }
  }
  process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : formatProjectionReport(report));
  return 0;
}

/**
 * Rebuilds a durable projection aside with a progress bar (docs/operations.md "Rebuilding aside"). On the embedded
 * store a running server does it (through its operator socket) while it serves; otherwise this process
 * replays the projection into a schema of its own and swaps it in at the head — with a server running
 * elsewhere on the same PostgreSQL too: that server's writer keeps the live read model moving meanwhile
 * and finds its checkpoint moved after the swap. A replay that fails changes nothing live (exit 1).
 */
export async function projectionsRebuild(name: string): Promise<number> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  if (server) return rebuildThrough(server, name);
  const platform = await openPlatform(environment, { runDurable: false });
  try {
    const status = durableStatus(platform.runner.status(), name, 'Rebuildable');
    if (!status) return 2;
    const goal = (await lastEventFor(platform.database, status.eventTypes))?.globalPosition ?? 0;
    const bar = new ProgressBar(`rebuilding ${name}`, 'positions');
    bar.update(0, goal);
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const progress = platform.runner.status().find((s) => s.name === name)?.rebuild;
        if (progress) bar.update(Math.min(progress.position, goal), goal);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    try {
      const done = await platform.runner.rebuild(name);
      polling = false;
      await poll;
      bar.update(goal, goal);
      bar.finish(`Rebuilt ${name} from position 0 to ${Math.max(goal, done.position)} (replayed aside by this process and swapped in at the head; the live read model served meanwhile).`);
      return 0;
    } catch (error) {
      if (!(error instanceof RebuildFailedError)) throw error;
      polling = false;
      await poll;
      bar.finish(`${error.message}.`);
      return 1;
    } finally {
      polling = false;
      await poll;
    }
  } finally {
    await platform.close();
  }
}

/**
 * The embedded store belongs to a running server: it replays the projection aside and swaps it in while it
 * serves (POST /admin/v1/projections/{name}/rebuild answers once the replay has begun), and the bar follows
 * the rebuild in its report until it is done or has failed.
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
  let lastProgress = { position: -1, at: Date.now() };
  for (;;) {
    const report = await server.get<ProjectionReport>('/admin/v1/projections');
    const rebuild = report.projections.find((row) => row.name === name)?.rebuild ?? null;
    const position = rebuild?.position ?? 0;
    if (position !== lastProgress.position) lastProgress = { position, at: Date.now() };
    bar.update(Math.min(position, started.goal), started.goal);
    if (rebuild?.state === 'done') {
      bar.update(started.goal, started.goal);
      bar.finish(`Rebuilt ${name} from position 0 to ${Math.max(position, started.goal)} (replayed by the running server, process ${server.pid}): swapped in at the head.`);
      return 0;
    }
    if (rebuild?.state === 'failed') {
      const at = rebuild.failedAt;
      bar.finish(`rebuilding ${name} failed${at ? ` at global position ${at.globalPosition} (event ${at.eventId}, ${at.eventType})` : ''}: ${rebuild.error}; the live read model is untouched.`);
      return 1;
    }
    if (Date.now() - lastProgress.at > STALL_TIMEOUT_MS) {
      throw new Error(`the server (process ${server.pid}) has not moved the ${name} rebuild for ${STALL_TIMEOUT_MS / 1000} s; see its log`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Clears a halted projection's halt and waits for the outcome (docs/operations.md "When a projection halts"): through a
 * running server on the embedded store, else on the store directly, where the process that runs the
 * projection (a server or a projector, on any node) learns of it from `projection_halts` at its next poll.
 */
export async function projectionsResume(name: string): Promise<number> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  let outcome: ResumeOutcome;
  if (server) {
    try {
      outcome = await server.post<ResumeOutcome>(`/admin/v1/projections/${encodeURIComponent(name)}/resume`, {});
    } catch (error) {
      if (!(error instanceof ServerRefusedError && error.code === 'unknown_projection')) throw error;
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
  } else {
    const platform = await openPlatform(environment, { runDurable: false });
    try {
      if (!durableStatus(platform.runner.status(), name, 'Durable projections')) return 2;
      outcome = await resumeProjection(platform, name);
    } finally {
      await platform.close();
    }
  }
  const { text, code } = describeResume(outcome);
  process.stdout.write(`${text}\n`);
  return code;
}

function durableStatus<S extends { name: string; kind: string }>(statuses: readonly S[], name: string, listed: string): S | null {
  const durable = statuses.filter((s) => s.kind === 'durable');
  const status = durable.find((s) => s.name === name);
  if (!status) {
    process.stderr.write(`Unknown projection '${name}'. ${listed}: ${durable.map((s) => s.name).join(', ')} ` +
      `(cost-ledger includes tenant spend; per-node projections rebuild at every start).\n`);
    return null;
  }
  return status;
}
