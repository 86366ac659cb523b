import type { ResolvedDeployment } from '../../projections/routing-snapshot/routing-snapshot.js';
import { KeyedConcurrency } from './concurrency-gate.js';
import type { Permit } from './permit.js';

/**
 * In-flight calls per deployment, against the deployment's `limits.maxConcurrency`. A saturated
 * deployment is skipped (routing moves to the next candidate) rather than given a hidden backlog; the
 * slot is taken only when the attempt actually starts.
 */
export class DeploymentConcurrency {
  private readonly inFlight = new KeyedConcurrency();

  saturated(deployment: ResolvedDeployment): boolean {
    const limit = deployment.limits.maxConcurrency;
    return limit !== null && this.inFlight.inUse(deployment.id) >= limit;
  }

  tryAcquire(deployment: ResolvedDeployment): Permit | null {
    return this.inFlight.tryAcquire(deployment.id, deployment.limits.maxConcurrency);
  }

  get total(): number {
    return this.inFlight.total;
  }
}
