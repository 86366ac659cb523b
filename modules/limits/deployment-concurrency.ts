import { randomUUID } from 'node:crypto';
import type { ResolvedDeployment } from '../../projections/routing-snapshot/index.js';
import { KeyedConcurrency } from './concurrency-gate.js';
import { NO_PERMIT, type Permit } from './permit.js';
import type { SharedConcurrency } from './shared-concurrency.js';

/**
 * In-flight calls per deployment quota group (`quotaGroup`, else the deployment alone: the provider's
 * real concurrency is shared by every deployment that uses it), each call checked against its own
 * deployment's `limits.maxConcurrency`. Counted by this node always, and across every node when Redis is
 * configured (SharedConcurrency; while Redis is away this node's count is the limit). A saturated
 * deployment is skipped (routing moves to the next candidate) rather than given a hidden backlog; the
 * slot is taken only when the attempt actually starts.
 */
export class DeploymentConcurrency {
  private readonly inFlight = new KeyedConcurrency();

  constructor(private readonly shared: Pick<SharedConcurrency, 'tryAcquire'> | null = null) {}

  /** This node alone already holds as many calls to the deployment's group as the deployment allows. */
  saturated(deployment: ResolvedDeployment): boolean {
    const limit = deployment.limits.maxConcurrency;
    return limit !== null && this.inFlight.inUse(groupOf(deployment)) >= limit;
  }

  /** A slot in this node's count of the deployment's group, or null when the node holds the limit. */
  tryAcquire(deployment: ResolvedDeployment): Permit | null {
    return this.inFlight.tryAcquire(groupOf(deployment), deployment.limits.maxConcurrency);
  }

  /**
   * A lease in the group's counter shared by every node, or null when the nodes together hold the
   * deployment's limit. Without a limit, without Redis or while it is away there is nothing to share:
   * a no-op permit (the node's own slot is then the limit).
   */
  async acrossNodes(deployment: ResolvedDeployment, leaseMs: number): Promise<Permit | null> {
    const limit = deployment.limits.maxConcurrency;
    if (limit === null || !this.shared) return NO_PERMIT;
    return this.shared.tryAcquire([{ kind: 'quota_group', id: groupOf(deployment), limit }], randomUUID(), leaseMs);
  }

  get total(): number {
    return this.inFlight.total;
  }
}

/** The counter a deployment's calls share: the same grouping as its per-minute quota (QuotaGroupCharges). */
function groupOf(deployment: ResolvedDeployment): string {
  return deployment.quotaGroup ?? deployment.id;
}
