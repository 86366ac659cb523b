import type { TokenUsage } from '../../../events/index.js';
import { GatewayError } from '../../canonical/index.js';
import type { RateLimiter, RateReservation, RateUsage } from '../../limits/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';

/** A quota group that refused an attempt: the 429 the limiter gave, kept to name the scope if no route is left. */
export interface QuotaRefusal {
  error: GatewayError;
  /** When the group's window has room for this request again (epoch ms); null: never (the request is larger than its limit). */
  recoversAt: number | null;
}

/** The counter a deployment's provider quota lives in: its quota group, else the deployment alone. */
export function quotaGroupOf(deployment: ResolvedDeployment): string {
  return deployment.quotaGroup ?? deployment.id;
}

/**
 * A request's charges on deployment quota groups (the provider's real quota, shared by every deployment
 * in the group). Unlike the key, tenant and alias, which a request counts against whichever route serves
 * it, a quota group is only used by the attempts that actually go there: each group is reserved (with the
 * admission estimate) right before the first attempt that is dispatched to it, and settled with the usage
 * of the attempts that went there — tokens zero when they produced nothing, one request, because the
 * provider saw the call.
 */
export class QuotaGroupCharges {
  private readonly reserved = new Map<string, RateReservation>();
  private readonly groupOfDeployment = new Map<string, string>();
  private settled = false;

  constructor(private readonly limiter: RateLimiter, private readonly estimate: RateUsage, private readonly clock: () => number = Date.now) {}

  /**
   * Reserves the deployment's quota group unless this request holds it already; a refusal charges nothing.
   * `route` (`alias#n`) names a deployment's own quota in the refusal, which must not name the deployment.
   */
  async enter(deployment: ResolvedDeployment, route: string): Promise<QuotaRefusal | null> {
    const group = quotaGroupOf(deployment);
    if (this.settled) throw new Error('the quota group charges of this request were settled already');
    if (this.reserved.has(group)) {
      this.groupOfDeployment.set(deployment.id, group);
      return null;
    }
    try {
      const scope = { kind: 'quota_group' as const, id: group, limits: deployment.limits, ...(deployment.quotaGroup === null ? { shownAs: route } : {}) };
      const reservation = await this.limiter.reserve([scope], this.estimate);
      this.reserved.set(group, reservation);
      this.groupOfDeployment.set(deployment.id, group);
      return null;
    } catch (error) {
      if (!(error instanceof GatewayError) || error.code !== 'rate_limited') throw error;
      // No retry-after: the request is larger than the group's limit, and waiting never makes it fit.
      const retryMs = error.headers['retry-after-ms'];
      return { error, recoversAt: retryMs === undefined ? null : this.clock() + Number(retryMs) };
    }
  }

  /** Settles every group with what the attempts on its deployments used; idempotent. */
  settle(usageByDeployment: ReadonlyMap<string, TokenUsage>): void {
    if (this.settled) return;
    this.settled = true;
    const used = new Map<string, RateUsage>();
    for (const group of this.reserved.keys()) used.set(group, { requests: 1, inputTokens: 0, outputTokens: 0 });
    for (const [deploymentId, usage] of usageByDeployment) {
      const group = this.groupOfDeployment.get(deploymentId);
      const total = group ? used.get(group) : undefined;
      if (!total) continue;
      total.inputTokens += usage.input;
      total.outputTokens += usage.output;
    }
    for (const [group, reservation] of this.reserved) reservation.settle(used.get(group)!);
  }
}
