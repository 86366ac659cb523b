/**
 * The load generator in a process of its own: its CPU is measured separately, and a busy target cannot
 * slow its timers (it shares the cores, not the event loop).
 */
import { closedLoop } from '../load/closed-loop.js';
import { type OpenLoopOptions, openLoop } from '../load/open-loop.js';
import { type SlowStreamsOptions, slowStreams } from '../load/slow-streams.js';
import type { RequestSpec } from '../load/timed-request.js';
import { announce, answerRequests } from './ipc.js';

interface Job {
  origin: string;
  spec: RequestSpec;
}

/**
 * Warm-up until the target's JIT has seen enough requests: at least `minMs` and `minRequests`, at most
 * `maxMs`. A fixed time alone warms a slow target far less than a fast one.
 */
async function warmUp(job: Job & { minMs: number; minRequests: number; maxMs: number; drainMs: number }): Promise<{ requests: number; ms: number }> {
  const start = performance.now();
  let requests = 0;
  do {
    const round = await closedLoop(job.origin, job.spec, 16, 500, job.drainMs);
    requests += round.issued;
  } while ((performance.now() - start < job.minMs || requests < job.minRequests) && performance.now() - start < job.maxMs);
  return { requests, ms: Math.round(performance.now() - start) };
}

answerRequests({
  warmup: warmUp,
  closed: (job: Job & { connections: number; durationMs: number; drainMs: number }) =>
    closedLoop(job.origin, job.spec, job.connections, job.durationMs, job.drainMs),
  open: (job: Job & OpenLoopOptions) => openLoop(job.origin, job.spec, job),
  slow: (job: Job & SlowStreamsOptions) => slowStreams(job.origin, job.spec, job, () => announce('plateau')),
});
announce('ready');
