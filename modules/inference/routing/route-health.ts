import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import type { DeploymentConcurrency } from '../../limits/index.js';
import type { DeploymentHealth } from '../resilience/deployment-health.js';
import type { HealthView } from './route-planner.js';

/** The planner's health stage: circuit breakers and retry-after throttles, then deployment saturation. */
export class RouteHealth implements HealthView {
  constructor(
    private readonly health: DeploymentHealth,
    private readonly concurrency: DeploymentConcurrency,
  ) {}

  unavailable(deployment: ResolvedDeployment): ReturnType<HealthView['unavailable']> {
    const blocked = this.health.unavailable(deployment.id);
    if (blocked) return blocked;
    if (this.concurrency.saturated(deployment)) return { reason: 'saturated', until: null };
    return null;
  }
}
