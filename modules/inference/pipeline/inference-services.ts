import type { GatewayAuthenticator } from '../../access/index.js';
import type { GuardResources } from '../../content-safety/index.js';
import type { AdmissionControl, BudgetGuard, RateLimiter, SharedConcurrency } from '../../limits/index.js';
import type { ProviderAdapters, UpstreamPools } from '../../providers/index.js';
import type { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/index.js';
import type { GroupCommitter } from '../../../src/kernel/index.js';
import type { DeploymentGate } from '../resilience/deployment-gate.js';
import type { ResilienceSettings } from '../resilience/resilience-settings.js';
import type { LatencyTracker } from '../routing/latency-tracker.js';
import type { RoutePlanner } from '../routing/route-planner.js';
import type { DurabilityProfile } from './durability.js';
import type { DocumentLimits } from '../../canonical/index.js';

/** The data plane's collaborators, shared by every operation's pipeline (wired by InferenceModule). */
export interface InferenceServices {
  auth: GatewayAuthenticator;
  routing: RoutingSnapshotProjection;
  planner: RoutePlanner;
  adapters: ProviderAdapters;
  pools: UpstreamPools;
  committer: GroupCommitter;
  latency: LatencyTracker;
  gate: DeploymentGate;
  admission: AdmissionControl;
  rateLimits: RateLimiter;
  budgets: BudgetGuard;
  concurrency: SharedConcurrency;
  /** What a request's content guard is built from (placeholder keys, session vaults). */
  content: GuardResources;
  /** Jitter source for backoff (tests pin it). */
  random?: () => number;
}

export interface PipelineSettings {
  durability: DurabilityProfile;
  nodeId: string;
  resilience: ResilienceSettings;
  /** Document size limits; absent: DEFAULT_DOCUMENT_LIMITS. */
  documents?: DocumentLimits;
}
