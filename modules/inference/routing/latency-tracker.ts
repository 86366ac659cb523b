/** Which latency a least-latency choice compares: time to first token (streams) or whole-call latency. */
export type LatencyKind = 'ttft' | 'latency';

/**
 * Exponentially weighted moving averages of time to first token and total latency per deployment,
 * for the least-latency strategy. In memory per node: routing needs recent local experience, not history.
 */
export class LatencyTracker {
  private readonly ewma = new Map<string, number>();
  private readonly ttft = new Map<string, number>();

  constructor(private readonly alpha = 0.2) {}

  /** A successful call's total latency. */
  observe(deploymentId: string, latencyMs: number): void {
    this.fold(this.ewma, deploymentId, latencyMs);
  }

  /** A stream's time to its first token. */
  observeTtft(deploymentId: string, ttftMs: number): void {
    this.fold(this.ttft, deploymentId, ttftMs);
  }

  /**
   * The current average; unknown deployments rank first (0) so that every route gets measured. A
   * stream falls back to total latency for a deployment whose TTFT was never measured.
   */
  estimate(deploymentId: string, kind: LatencyKind = 'latency'): number {
    if (kind === 'ttft') return this.ttft.get(deploymentId) ?? this.ewma.get(deploymentId) ?? 0;
    return this.ewma.get(deploymentId) ?? 0;
  }

  private fold(averages: Map<string, number>, deploymentId: string, sample: number): void {
    const previous = averages.get(deploymentId);
    averages.set(deploymentId, previous === undefined ? sample : previous + this.alpha * (sample - previous));
  }
}
