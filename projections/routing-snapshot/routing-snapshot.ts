import { type AliasPolicy, type AliasVisibility, type DeploymentLimits, priceAt, type ProviderType, type RoutingStrategy, type ScheduledPrice } from '../../events/index.js';
import { ContentPolicyIndex } from './content-policy-index.js';
import type { Credential } from './credential.js';
import type { EffectiveContentPolicy } from './effective-content-policy.js';

export interface ResolvedProvider {
  id: string;
  type: ProviderType;
  /** Null for the in-process mock provider. */
  baseUrl: string | null;
  apiVersion: string | null;
  region: string | null;
  credential: Credential | null;
  /** Loopback, private and link-local addresses may be reached (the outbound address policy). */
  allowPrivateNetwork: boolean;
}

export interface ResolvedDeployment {
  id: string;
  provider: ResolvedProvider;
  model: string;
  region: string | null;
  capabilities: ReadonlySet<string>;
  contextWindow: number;
  maxOutputTokens: number;
  quotaGroup: string | null;
  limits: DeploymentLimits;
  status: 'active' | 'disabled';
  /** Every scheduled price, effectiveFrom ascending; the one in effect at admission is used. */
  prices: readonly ScheduledPrice[];
  /** Changes whenever anything that affects how the deployment is called changes (pool reuse key). */
  fingerprint: string;
}

export interface ResolvedRoute {
  deployment: ResolvedDeployment;
  priority: number;
  weight: number;
}

export interface ResolvedAlias {
  name: string;
  version: number;
  strategy: RoutingStrategy;
  policy: AliasPolicy;
  visibility: AliasVisibility;
  routes: readonly ResolvedRoute[];
}

/**
 * What serves traffic: immutable, swapped atomically, captured once per request so a reload never
 * changes an in-flight request. `version` is the global position of the last event applied.
 */
export interface RoutingSnapshot {
  readonly version: number;
  readonly aliases: ReadonlyMap<string, ResolvedAlias>;
  readonly deployments: ReadonlyMap<string, ResolvedDeployment>;
  /**
   * The content policy in force for a request of key `keyId` (tenant `tenantId`) on `alias`: the policies
   * attached to each, combined (effective-content-policy.ts); null when none is attached.
   */
  contentPolicyFor(tenantId: string, keyId: string, alias: string): EffectiveContentPolicy | null;
}

/** A snapshot's members: `contentPolicyFor` answers from the snapshot's own content-policy index. */
export function routingSnapshot(
  version: number, aliases: ReadonlyMap<string, ResolvedAlias>, deployments: ReadonlyMap<string, ResolvedDeployment>, policies: ContentPolicyIndex,
): RoutingSnapshot {
  return Object.freeze({
    version, aliases, deployments,
    contentPolicyFor: (tenantId: string, keyId: string, alias: string) => policies.contentPolicyFor(tenantId, keyId, alias),
  });
}

export const EMPTY_SNAPSHOT: RoutingSnapshot = routingSnapshot(0, new Map(), new Map(), ContentPolicyIndex.EMPTY);

/** The deployment's price in effect at `at`, by the price schedule's one rule (`priceAt`, events/price-state.ts). */
export function priceInEffect(deployment: ResolvedDeployment, at: Date): ScheduledPrice | null {
  return priceAt({ schedule: deployment.prices }, at);
}
