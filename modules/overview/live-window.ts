import type { Database } from '../../src/kernel/index.js';

export interface LiveWindow {
  window: { seconds: number };
  requestsPerSecond: number;
  errorsByClass: Record<string, number>;
  latencyMs: { p50: number | null; p95: number | null };
}

interface WindowRow {
  requests: string;
  p50: number | string | null;
  p95: number | string | null;
}

/**
 * Traffic over the last `seconds`, for the whole installation: read from `request_summaries` (every node's
 * requests, as the projection has applied them — up to its lag behind), by a range scan of its time index
 * that touches only the window's rows. Requests still in flight count in the rate; their latency is not
 * known yet and is left out of the percentiles (exact, not from histogram buckets).
 */
export async function liveWindow(database: Database, seconds: number, now: Date): Promise<LiveWindow> {
  const since = new Date(now.getTime() - seconds * 1000).toISOString();
  const [totals] = await database.query<WindowRow>(
    `SELECT count(*)::text AS requests,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95
     FROM request_summaries WHERE at >= $1::timestamptz AND at <= $2::timestamptz`,
    [since, now.toISOString()],
  );
  // The class of an error is the client-visible code; a request that failed without one by its status.
  const errors = await database.query<{ class: string; n: string }>(
    `SELECT COALESCE(error_code, 'http_' || http_status::text, status) AS class, count(*)::text AS n
     FROM request_summaries
     WHERE at >= $1::timestamptz AND at <= $2::timestamptz AND status IN ('failed', 'rejected', 'cancelled')
     GROUP BY 1 ORDER BY 2 DESC, 1`,
    [since, now.toISOString()],
  );
  const ms = (value: number | string | null) => (value === null ? null : Math.round(Number(value)));
  return {
    window: { seconds },
    requestsPerSecond: Math.round((Number(totals?.requests ?? 0) / seconds) * 100) / 100,
    errorsByClass: Object.fromEntries(errors.map((row) => [row.class, Number(row.n)])),
    latencyMs: { p50: ms(totals?.p50 ?? null), p95: ms(totals?.p95 ?? null) },
  };
}
