/** The routing snapshot's public surface: per node, in memory, the immutable view of the catalog that serves traffic. */
export { buildRoutingSnapshot, type ProviderSettingsRule } from './build-routing-snapshot.js';
export { Credential } from './credential.js';
export { ContentPolicyIndex } from './content-policy-index.js';
export { type AttachedPolicy, combineContentPolicies, type EffectiveContentPolicy } from './effective-content-policy.js';
export { type ResolvedAlias, type ResolvedDeployment, type RoutingSnapshot, priceInEffect } from './routing-snapshot.js';
export { RoutingSnapshotProjection } from './routing-snapshot.projection.js';
