/**
 * Exponentially weighted moving averages of time to first token and total latency per deployment,
 * for the least-latency strategy. In memory per node: routing needs recent local experience, not history.
 */
export class LatencyTracker {
  private readonly ewma = new Map<string, number>();

  constructor(private readonly alpha = 0.2) {}

  observe(deploymentId: string, latencyMs: number): void {
    const previous = this.ewma.get(deploymentId);
    this.ewma.set(deploymentId, previous === undefined ? latencyMs : previous + this.alpha * (latencyMs - previous));
  }

  /** Unknown deployments rank first so that every route gets measured. */
  estimate(deploymentId: string): number {
    return this.ewma.get(deploymentId) ?? 0;
  }
}
