import type { GroupCommitter, ProjectionRunner } from '../../src/kernel/index.js';
import type { Observability } from './observability.js';

/** Projection lag is counted up to this many events (a scrape must stay cheap however far behind). */
export const LAG_COUNT_CAP = 1_000_000;

/**
 * The kernel's numbers as metrics: group-commit batches and their latency (from the committer's stats
 * hook), projection lag (counted at scrape time, never on the request path), halted projections and the
 * event-store outage spool's size. Returns what stops watching.
 */
export function watchKernel(observability: Observability, committer: GroupCommitter, runner: ProjectionRunner): () => void {
  const { metrics } = observability;
  const stop = committer.onCommit((stats) => {
    metrics.commitBatchEvents.observe(stats.events);
    metrics.commitDuration.observe(stats.durationMs / 1000);
    if (stats.failed) metrics.commitFailures.inc();
  });
  metrics.gauge('switchyard_projection_lag_events', 'Events a projection run by this process has not applied yet (capped at 1e6).', ['projection'], async (gauge) => {
    // A scrape while the database is down still answers; readiness names that problem.
    const lags = await runner.lag(LAG_COUNT_CAP).catch(() => []);
    for (const { name, behind } of lags) gauge.set({ projection: name }, behind);
  }, 'max');
  metrics.gauge('switchyard_projection_halted', 'Durable projections halted at an event they cannot apply (1; 0 otherwise), wherever they run: their read model stops there until resumed.', ['projection'], async (gauge) => {
    const durable = runner.status().filter((status) => status.kind === 'durable').map((status) => status.name);
    // From projection_halts, so every process reports it; with the database down, this process's own.
    const halted = new Set((await runner.halts().catch(() => runner.status().flatMap((status) => (status.halted ? [status.halted] : [])))).map((halt) => halt.name));
    for (const name of durable) gauge.set({ projection: name }, halted.has(name) ? 1 : 0);
  }, 'max');
  metrics.gauge('switchyard_event_spool_bytes', 'Bytes waiting in the local event-store outage spool (0 while the event store is reachable).', [], (gauge) => {
    gauge.set(observability.spoolBytes());
  });
  return stop;
}
