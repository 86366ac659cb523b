import { Pool } from 'undici';

export interface LoadSpec {
  url: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Read the response as SSE to the end (the latency is then time to the last byte). */
  stream: boolean;
}

export interface Sample {
  /** End-to-end latency in ms, measured from the scheduled send time (no coordinated omission). */
  latencyMs: number;
  ok: boolean;
}

/**
 * Open loop: requests are sent at a fixed rate whatever the server does, and each latency is counted
 * from when the request was due, so a stalled server cannot hide its stalls by slowing the generator.
 */
export async function openLoop(spec: LoadSpec, ratePerSecond: number, durationMs: number): Promise<Sample[]> {
  const pool = new Pool(spec.url, { connections: 1024, pipelining: 1 });
  const samples: Sample[] = [];
  const pending: Array<Promise<void>> = [];
  const start = performance.now();
  const interval = 1000 / ratePerSecond;
  const total = Math.floor((durationMs / 1000) * ratePerSecond);
  for (let i = 0; i < total; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(send(pool, spec, due).then((sample) => void samples.push(sample)));
  }
  await Promise.all(pending);
  await pool.close();
  return samples;
}

/** Closed loop: `connections` clients each send the next request as soon as the previous one finished. */
export async function closedLoop(spec: LoadSpec, connections: number, durationMs: number): Promise<Sample[]> {
  const pool = new Pool(spec.url, { connections, pipelining: 1 });
  const samples: Sample[] = [];
  const until = performance.now() + durationMs;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) samples.push(await send(pool, spec, performance.now()));
    }),
  );
  await pool.close();
  return samples;
}

async function send(pool: Pool, spec: LoadSpec, due: number): Promise<Sample> {
  try {
    const response = await pool.request({ path: spec.path, method: 'POST', headers: spec.headers, body: spec.body });
    let tail = '';
    for await (const chunk of response.body) tail = (tail + (chunk as Buffer).toString('utf8')).slice(-64);
    const ok = response.statusCode === 200 && (!spec.stream || tail.includes('[DONE]'));
    return { latencyMs: performance.now() - due, ok };
  } catch {
    return { latencyMs: performance.now() - due, ok: false };
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}
