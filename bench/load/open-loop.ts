import { Pool } from 'undici';
import { type LoadResult, type Sample, summarizeLoad } from './sample.js';
import { type RequestSpec, timedRequest } from './timed-request.js';
import { drainBy } from './drain.js';

export interface OpenLoopOptions {
  ratePerSecond: number;
  durationMs: number;
  /** A request written to its socket later than this after its due time counts as not sent on time. */
  lateMs: number;
  /** How long to wait for the last responses after the schedule ended before giving them up. */
  drainMs: number;
  /** Most sockets the generator opens; beyond it requests wait for a free one (and count as late). */
  maxConnections: number;
}

/**
 * Open loop: requests are due at a fixed rate whatever the server does, and each latency is counted from
 * its due time, so a stalled server cannot hide its stalls by slowing the generator (no coordinated
 * omission). The timer wakes at most once a millisecond and sends every request that has come due.
 */
export async function openLoop(origin: string, spec: RequestSpec, options: OpenLoopOptions): Promise<LoadResult> {
  const pool = new Pool(origin, { connections: options.maxConnections, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const interval = 1000 / options.ratePerSecond;
  const total = Math.max(1, Math.floor((options.durationMs / 1000) * options.ratePerSecond));
  const start = performance.now() + 5;
  const pending: Array<Promise<Sample>> = [];
  await new Promise<void>((resolve) => {
    let next = 0;
    const tick = () => {
      const now = performance.now();
      while (next < total && start + next * interval <= now) {
        pending.push(timedRequest(pool, spec, start + next * interval));
        next++;
      }
      if (next >= total) return resolve();
      setTimeout(tick, Math.max(0, start + next * interval - performance.now()));
    };
    setTimeout(tick, 5);
  });
  const windowEnd = start + total * interval;
  const samples: Sample[] = [];
  await drainBy(Promise.all(pending.map((p) => p.then((sample) => void samples.push(sample)))), windowEnd + options.drainMs, () => pool.destroy(), () => samples);
  await pool.close().catch(() => undefined);
  return summarizeLoad(samples, { loop: 'open', level: options.ratePerSecond, mode: spec.stream ? 'sse' : 'buffered', windowStart: start, windowEnd, lateMs: options.lateMs });
}
