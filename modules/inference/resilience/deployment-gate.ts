import type { ProviderError } from '../../canonical/index.js';
import { type DeploymentConcurrency, type Permit, permits } from '../../limits/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import type { HealthRefusal } from '../routing/route-planner.js';
import type { HealthSignal } from './circuit-breaker.js';
import type { DeploymentHealth } from './deployment-health.js';
import { DEFAULT_RESILIENCE, concurrencyLeaseMs } from './resilience-settings.js';

/** Permission to make one call to a deployment: a breaker pass and its concurrency slots, held together. */
export interface GateLease {
  /** The call is a half-open trial of a recovering breaker. */
  readonly trial: boolean;
  /**
   * Ends the call: frees the slot, tells the breaker what the call said about the provider and, when the
   * provider asked for it, holds the deployment back for its retry-after. Idempotent.
   */
  leave(signal: HealthSignal, error: ProviderError | null): void;
}

/** Why a deployment cannot take a call right now, and when that should change (epoch ms), if known. */
export interface GateRefusal {
  refused: Exclude<HealthRefusal, 'disabled'>;
  until: number | null;
}

/**
 * The one door to a deployment at call time (the planner's health stage only looked; this takes): this
 * node's slot in the deployment's quota group, the circuit breaker and the retry-after throttle, then
 * the group's lease across nodes (Redis) — last, so a deployment refused here costs no Redis call. A
 * lease is released on every path by `leave`.
 */
export class DeploymentGate {
  constructor(
    private readonly health: DeploymentHealth,
    private readonly load: DeploymentConcurrency,
    /** How long a lease across nodes lasts (concurrencyLeaseMs): the longest a call may live. */
    private readonly leaseMs = concurrencyLeaseMs(DEFAULT_RESILIENCE.deadlines),
  ) {}

  /** `afterRetryAfter`: the caller just waited out this deployment's retry-after, so its throttle no longer applies. */
  async enter(deployment: ResolvedDeployment, afterRetryAfter = false): Promise<GateLease | GateRefusal> {
    const slot = this.load.tryAcquire(deployment);
    if (!slot) return { refused: 'saturated', until: null };
    const pass = this.health.tryPass(deployment.id, { ignoreThrottle: afterRetryAfter });
    if ('reason' in pass) {
      slot.release();
      return { refused: pass.reason, until: pass.until };
    }
    let shared: Permit | null;
    try {
      shared = await this.load.acrossNodes(deployment, this.leaseMs);
    } catch (error) {
      slot.release();
      this.health.finish(pass, 'neutral');
      throw error;
    }
    if (!shared) {
      // The other nodes hold the group's limit: nothing was sent, so the breaker learns nothing.
      slot.release();
      this.health.finish(pass, 'neutral');
      return { refused: 'saturated', until: null };
    }
    const held = permits([slot, shared]);
    let open = true;
    return {
      trial: pass.trial,
      leave: (signal, error) => {
        if (!open) return;
        open = false;
        held.release();
        this.health.finish(pass, signal);
        if (error?.retryAfterMs != null && (error.errorClass === 'rate_limited' || error.errorClass === 'overloaded')) {
          this.health.throttle(deployment.id, error.retryAfterMs, error.errorClass);
        }
      },
    };
  }

  /**
   * When this node will call the deployment again, if not now: the end of its retry-after throttle (at most
   * MAX_THROTTLE_MS) or of its open breaker. What a client's retry-after is made of, never a provider's raw hint.
   */
  recoversAt(deploymentId: string): number | null {
    return this.health.unavailable(deploymentId)?.until ?? null;
  }
}

export function isRefusal(entry: GateLease | GateRefusal): entry is GateRefusal {
  return 'refused' in entry;
}
