import type { BreakerCounts, BreakerOpenReason, BreakerSource } from '../../../events/index.js';
import type { BreakerSettings } from './resilience-settings.js';

export type BreakerState = 'closed' | 'open' | 'half-open';

/** What an attempt did to the deployment's health. Neutral outcomes (the caller's fault) count for nothing. */
export type HealthSignal = 'success' | 'failure' | 'neutral';

/** A state change, reported so it can be journaled and shared with other nodes. */
export type BreakerTransition =
  | { to: 'open'; reason: BreakerOpenReason; source: BreakerSource; counts: BreakerCounts; cooldownMs: number; openUntil: number; originNodeId: string | null }
  | { to: 'half-open'; source: BreakerSource; openedForMs: number }
  | { to: 'closed'; source: BreakerSource; trialSuccesses: number; originNodeId: string | null };

/** Permission to call the deployment, returned to `record` with the outcome. */
export interface BreakerPass {
  /** True when the call is a half-open trial. */
  readonly trial: boolean;
  /** The breaker generation it was issued in: outcomes of an older generation are stale. */
  readonly generation: number;
}

const BUCKETS = 60;

/**
 * One deployment's circuit breaker. Closed: traffic flows and outcomes are counted in a rolling window
 * of 60 buckets; it opens when the failure rate exceeds the threshold over enough samples, or after a
 * run of consecutive failures. Open: traffic is held off for a cool-down (30 s, doubling on every failed
 * trial up to 5 min). Half-open: a bounded number of trial calls go through; enough consecutive trial
 * successes close it, one trial failure opens it again.
 *
 * Time comes in as arguments, so the state machine is deterministic under test. Transitions are
 * returned, never performed as side effects, and the registry reports them.
 */
export class CircuitBreaker {
  private current: BreakerState = 'closed';
  private generation = 0;
  private cooldownMs: number;
  private openedAt = 0;
  private openUntil = 0;
  private openedBy: BreakerSource = 'local';
  private consecutiveFailures = 0;
  private trialsInFlight = 0;
  private trialSuccesses = 0;
  private readonly bucketMs: number;
  private readonly bucketStart = new Float64Array(BUCKETS).fill(-1);
  private readonly bucketFailures = new Uint32Array(BUCKETS);
  private readonly bucketSamples = new Uint32Array(BUCKETS);

  constructor(private readonly settings: BreakerSettings) {
    this.cooldownMs = settings.cooldownMs;
    this.bucketMs = Math.max(1, settings.windowMs / BUCKETS);
  }

  /** The state at `now`; an open breaker whose cool-down ended becomes half-open here. */
  state(now: number): { state: BreakerState; transition: BreakerTransition | null } {
    if (this.current === 'open' && now >= this.openUntil) {
      this.current = 'half-open';
      this.generation++;
      this.trialsInFlight = 0;
      this.trialSuccesses = 0;
      return { state: this.current, transition: { to: 'half-open', source: 'local', openedForMs: Math.round(now - this.openedAt) } };
    }
    return { state: this.current, transition: null };
  }

  /** When traffic may flow again (epoch ms), or null when it may flow now. */
  blockedUntil(now: number): number | null {
    const { state } = this.peek(now);
    if (state === 'open') return this.openUntil;
    if (state === 'half-open' && this.trialsInFlight >= this.settings.maxTrialsInFlight) return now;
    return null;
  }

  /** A pass to call the deployment, or null while it is open (or its half-open trial slots are taken). */
  tryPass(now: number): { pass: BreakerPass | null; transition: BreakerTransition | null } {
    const { state, transition } = this.state(now);
    if (state === 'closed') return { pass: { trial: false, generation: this.generation }, transition };
    if (state === 'half-open' && this.trialsInFlight < this.settings.maxTrialsInFlight) {
      this.trialsInFlight++;
      return { pass: { trial: true, generation: this.generation }, transition };
    }
    return { pass: null, transition };
  }

  /** Records what a call did. Outcomes of calls let through before the last transition are ignored. */
  record(pass: BreakerPass, signal: HealthSignal, now: number): BreakerTransition | null {
    if (pass.generation !== this.generation) return null;
    if (this.current === 'half-open') {
      if (!pass.trial) return null;
      this.trialsInFlight = Math.max(0, this.trialsInFlight - 1);
      if (signal === 'success') {
        this.trialSuccesses++;
        if (this.trialSuccesses >= this.settings.trialSuccesses) return this.close('local', null);
        return null;
      }
      if (signal === 'failure') {
        this.cooldownMs = Math.min(this.cooldownMs * 2, this.settings.maxCooldownMs);
        return this.open('trial_failed', now, this.counts(now));
      }
      return null;
    }
    if (this.current !== 'closed' || signal === 'neutral') return null;
    this.count(signal === 'failure', now);
    if (signal === 'success') {
      this.consecutiveFailures = 0;
      return null;
    }
    this.consecutiveFailures++;
    const counts = this.counts(now);
    if (this.consecutiveFailures >= this.settings.consecutiveFailures) return this.open('consecutive_failures', now, counts);
    if (counts.samples >= this.settings.minSamples && counts.failures / counts.samples > this.settings.failureRateThreshold) {
      return this.open('failure_rate', now, counts);
    }
    return null;
  }

  /**
   * Another node opened its breaker for this deployment: hold traffic off until `until` as well. A
   * breaker already open for longer keeps its own deadline.
   */
  adoptOpen(until: number, now: number, originNodeId: string): BreakerTransition | null {
    if (until <= now) return null;
    if (this.current === 'open' && this.openUntil >= until) return null;
    this.current = 'open';
    this.generation++;
    this.openedAt = now;
    this.openUntil = until;
    this.openedBy = 'remote';
    this.trialsInFlight = 0;
    this.trialSuccesses = 0;
    this.resetWindow();
    return { to: 'open', reason: 'remote', source: 'remote', counts: this.counts(now), cooldownMs: Math.round(until - now), openUntil: until, originNodeId };
  }

  /** Another node's trials closed its breaker: close ours too, but only if another node opened it. */
  adoptClose(originNodeId: string): BreakerTransition | null {
    if (this.current === 'closed' || this.openedBy !== 'remote') return null;
    return this.close('remote', originNodeId);
  }

  /** Read-only view for operators and tests. */
  describe(now: number): { state: BreakerState; openUntil: number | null; cooldownMs: number; counts: BreakerCounts } {
    const { state } = this.peek(now);
    return { state, openUntil: state === 'open' ? this.openUntil : null, cooldownMs: this.cooldownMs, counts: this.counts(now) };
  }

  private peek(now: number): { state: BreakerState } {
    return { state: this.current === 'open' && now >= this.openUntil ? 'half-open' : this.current };
  }

  private open(reason: BreakerOpenReason, now: number, counts: BreakerCounts): BreakerTransition {
    this.current = 'open';
    this.generation++;
    this.openedAt = now;
    this.openUntil = now + this.cooldownMs;
    this.openedBy = 'local';
    this.trialsInFlight = 0;
    this.trialSuccesses = 0;
    this.consecutiveFailures = 0;
    this.resetWindow();
    return { to: 'open', reason, source: 'local', counts, cooldownMs: this.cooldownMs, openUntil: this.openUntil, originNodeId: null };
  }

  private close(source: BreakerSource, originNodeId: string | null): BreakerTransition {
    const trialSuccesses = this.trialSuccesses;
    this.current = 'closed';
    this.generation++;
    this.cooldownMs = this.settings.cooldownMs; // full recovery resets the doubling
    this.trialsInFlight = 0;
    this.trialSuccesses = 0;
    this.consecutiveFailures = 0;
    this.resetWindow();
    return { to: 'closed', source, trialSuccesses, originNodeId };
  }

  private count(failure: boolean, now: number): void {
    const slot = Math.floor(now / this.bucketMs);
    const index = slot % BUCKETS;
    if (this.bucketStart[index] !== slot) {
      this.bucketStart[index] = slot;
      this.bucketFailures[index] = 0;
      this.bucketSamples[index] = 0;
    }
    this.bucketSamples[index]++;
    if (failure) this.bucketFailures[index]++;
  }

  private counts(now: number): BreakerCounts {
    const oldest = Math.floor(now / this.bucketMs) - BUCKETS + 1;
    let failures = 0;
    let samples = 0;
    for (let i = 0; i < BUCKETS; i++) {
      if (this.bucketStart[i] >= oldest) {
        failures += this.bucketFailures[i];
        samples += this.bucketSamples[i];
      }
    }
    return { failures, samples, consecutiveFailures: this.consecutiveFailures };
  }

  private resetWindow(): void {
    this.bucketStart.fill(-1);
  }
}
