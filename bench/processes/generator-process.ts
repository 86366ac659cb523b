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

answerRequests({
  closed: (job: Job & { connections: number; durationMs: number; drainMs: number }) =>
    closedLoop(job.origin, job.spec, job.connections, job.durationMs, job.drainMs),
  open: (job: Job & OpenLoopOptions) => openLoop(job.origin, job.spec, job),
  slow: (job: Job & SlowStreamsOptions) => slowStreams(job.origin, job.spec, job, () => announce('plateau')),
});
announce('ready');
