import type { DomainEvent } from './event.js';

/**
 * Why a breaker opened: too many failures in the rolling window, a run of consecutive failures, a failed
 * half-open trial, or a signal from another node that opened its breaker for the same deployment.
 */
export type BreakerOpenReason = 'failure_rate' | 'consecutive_failures' | 'trial_failed' | 'remote';

/** Where a transition was decided: by this node's own observations, or adopted from another node. */
export type BreakerSource = 'local' | 'remote';

/** The counts a breaker decided on, so an incident can be reconstructed from the log alone. */
export interface BreakerCounts {
  /** Failures and samples in the rolling window when the breaker decided. */
  failures: number;
  samples: number;
  consecutiveFailures: number;
}

export type BreakerOpened = DomainEvent<
  'BreakerOpened',
  {
    deploymentId: string;
    reason: BreakerOpenReason;
    source: BreakerSource;
    /** The node whose observations opened it (this node, or the remote one). */
    originNodeId: string;
    counts: BreakerCounts;
    /** How long traffic is held off before trial traffic is let through. */
    cooldownMs: number;
    openUntil: string;
  }
>;

export type BreakerHalfOpened = DomainEvent<'BreakerHalfOpened', { deploymentId: string; source: BreakerSource; openedForMs: number }>;

export type BreakerClosed = DomainEvent<
  'BreakerClosed',
  { deploymentId: string; source: BreakerSource; originNodeId: string; trialSuccesses: number }
>;

export type BreakerEvent = BreakerOpened | BreakerHalfOpened | BreakerClosed;
export const BREAKER_EVENT_TYPES = ['BreakerOpened', 'BreakerHalfOpened', 'BreakerClosed'] as const;

/** One stream per deployment; several nodes append to it, so appends use expected version `any`. */
export const breakerStream = (deploymentId: string) => `breaker-${deploymentId}`;
