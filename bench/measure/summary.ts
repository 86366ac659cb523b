/** Distribution of one measured quantity (milliseconds), as the report prints it. */
export interface Distribution {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p999: number;
  max: number;
}

/**
 * Nearest-rank percentile of an ascending array: the smallest value with at least p% of the samples at
 * or below it. No interpolation, so every reported figure is a latency that a request really had.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

export function distribution(values: ArrayLike<number>): Distribution | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    mean: round3(sum / sorted.length),
    p50: round3(percentile(sorted, 50)),
    p90: round3(percentile(sorted, 90)),
    p95: round3(percentile(sorted, 95)),
    p99: round3(percentile(sorted, 99)),
    p999: round3(percentile(sorted, 99.9)),
    max: round3(sorted[sorted.length - 1]),
  };
}

export function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
