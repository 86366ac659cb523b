import { type BreakerPass, type BreakerState, type BreakerTransition, CircuitBreaker, type HealthSignal } from './circuit-breaker.js';
import type { BreakerSettings } from './resilience-settings.js';

/** Why a deployment may not be called right now, and when that should change (epoch ms). */
export interface Unavailable {
  /**
   * `rate_limited`: held back by the provider's retry-after on a 429 (every route so: the client's 429, which its SDK
   * retries); `throttled`: by a retry-after on an overload (503); the breaker's reasons otherwise.
   */
  reason: 'circuit_open' | 'trial_in_flight' | 'throttled' | 'rate_limited';
  until: number;
}

/** A call let through: hand it back to `finish` with what happened, exactly once. */
export interface HealthPass {
  readonly deploymentId: string;
  readonly trial: boolean;
  readonly breaker: BreakerPass;
}

export type TransitionListener = (deploymentId: string, transition: BreakerTransition) => void;

/**
 * The most a provider's retry-after may hold a deployment back (a hostile or broken value must not park it
 * for hours). It also bounds the retry-after a client is told for a throttled route: that is when the
 * gateway will call the route again.
 */
export const MAX_THROTTLE_MS = 300_000;

/**
 * Passive health of every deployment on this node: a circuit breaker each, and a throttle set from a
 * provider's retry-after (a deployment that said "rate limited, come back in 2 s" is skipped by every
 * request for those 2 s instead of being hammered). In memory and per node; breaker openings travel to
 * other nodes through the listeners (see BreakerSignals). Nothing here touches the network.
 */
export class DeploymentHealth {
  private readonly breakers = new Map<string, CircuitBreaker>();
  private readonly throttledUntil = new Map<string, { until: number; cause: 'rate_limited' | 'overloaded' }>();
  private readonly listeners: TransitionListener[] = [];

  constructor(
    private readonly settings: BreakerSettings,
    private readonly now: () => number = Date.now,
  ) {}

  onTransition(listener: TransitionListener): void {
    this.listeners.push(listener);
  }

  /** Null when the deployment may be called now; otherwise why not and until when. Does not take a trial slot. */
  unavailable(deploymentId: string, options: { ignoreThrottle?: boolean } = {}): Unavailable | null {
    const now = this.now();
    const throttle = this.throttledUntil.get(deploymentId);
    if (throttle !== undefined && !options.ignoreThrottle) {
      if (throttle.until > now) return { reason: throttle.cause === 'rate_limited' ? 'rate_limited' : 'throttled', until: throttle.until };
      this.throttledUntil.delete(deploymentId);
    }
    const breaker = this.breakers.get(deploymentId);
    if (!breaker) return null;
    this.report(deploymentId, breaker.state(now).transition);
    const until = breaker.blockedUntil(now);
    if (until === null) return null;
    return until > now ? { reason: 'circuit_open', until } : { reason: 'trial_in_flight', until: now + 1_000 };
  }

  /** Lets one call through, or refuses (open breaker, trial slots taken, throttled). */
  tryPass(deploymentId: string, options: { ignoreThrottle?: boolean } = {}): HealthPass | Unavailable {
    const blocked = this.unavailable(deploymentId, options);
    if (blocked) return blocked;
    const { pass, transition } = this.breaker(deploymentId).tryPass(this.now());
    this.report(deploymentId, transition);
    if (!pass) return this.unavailable(deploymentId, options) ?? { reason: 'trial_in_flight', until: this.now() + 1_000 };
    return { deploymentId, trial: pass.trial, breaker: pass };
  }

  /** What the call did; a `failure` may open the breaker, trial outcomes may close or reopen it. */
  finish(pass: HealthPass, signal: HealthSignal): void {
    this.report(pass.deploymentId, this.breaker(pass.deploymentId).record(pass.breaker, signal, this.now()));
  }

  /** Holds the deployment back for the provider's retry-after, remembering why (a 429, or an overload). */
  throttle(deploymentId: string, forMs: number, cause: 'rate_limited' | 'overloaded' = 'overloaded'): void {
    const until = this.now() + Math.min(Math.max(0, forMs), MAX_THROTTLE_MS);
    if ((this.throttledUntil.get(deploymentId)?.until ?? 0) < until) this.throttledUntil.set(deploymentId, { until, cause });
  }

  /** Another node opened its breaker for this deployment. */
  adoptOpen(deploymentId: string, until: number, originNodeId: string): void {
    this.report(deploymentId, this.breaker(deploymentId).adoptOpen(until, this.now(), originNodeId));
  }

  /** Another node closed its breaker for this deployment after successful trials. */
  adoptClose(deploymentId: string, originNodeId: string): void {
    this.report(deploymentId, this.breakers.get(deploymentId)?.adoptClose(originNodeId) ?? null);
  }

  /** Every breaker that is not closed, for operators and tests. */
  describe(): Array<{ deploymentId: string; state: BreakerState; openUntil: number | null; cooldownMs: number }> {
    const now = this.now();
    return [...this.breakers].map(([deploymentId, breaker]) => ({ deploymentId, ...breaker.describe(now) }));
  }

  stateOf(deploymentId: string): BreakerState {
    return this.breakers.get(deploymentId)?.describe(this.now()).state ?? 'closed';
  }

  private breaker(deploymentId: string): CircuitBreaker {
    let breaker = this.breakers.get(deploymentId);
    if (!breaker) {
      breaker = new CircuitBreaker(this.settings);
      this.breakers.set(deploymentId, breaker);
    }
    return breaker;
  }

  private report(deploymentId: string, transition: BreakerTransition | null): void {
    if (!transition) return;
    for (const listener of this.listeners) {
      try {
        listener(deploymentId, transition);
      } catch {
        // a failing journal or signal must never fail the request that caused the transition
      }
    }
  }
}
