import { Pool } from 'undici';
import { type LoadResult, type Sample, summarizeLoad } from './sample.js';
import { type RequestSpec, timedRequest } from './timed-request.js';
import { drainBy } from './drain.js';

/**
 * Closed loop: `connections` clients, each sending its next request as soon as the previous one ended.
 * It finds the saturation throughput; its latencies are per request from when the client issued it.
 */
export async function closedLoop(origin: string, spec: RequestSpec, connections: number, durationMs: number, drainMs: number): Promise<LoadResult> {
  const pool = new Pool(origin, { connections, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const samples: Sample[] = [];
  const start = performance.now();
  const until = start + durationMs;
  const clients = Array.from({ length: connections }, async () => {
    while (performance.now() < until) samples.push(await timedRequest(pool, spec, performance.now()));
  });
  await drainBy(Promise.all(clients), until + drainMs, () => pool.destroy(), () => samples);
  await pool.close().catch(() => undefined);
  return summarizeLoad(samples, { loop: 'closed', level: connections, mode: spec.stream ? 'sse' : 'buffered', windowStart: start, windowEnd: until, lateMs: null });
}
