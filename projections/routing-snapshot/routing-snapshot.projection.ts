import { Logger } from '@nestjs/common';
import {
  ALIAS_EVENT_TYPES, API_KEY_EVENT_TYPES, CONTENT_POLICY_EVENT_TYPES, DEPLOYMENT_EVENT_TYPES, PRICE_EVENT_TYPES, PROVIDER_EVENT_TYPES, TENANT_EVENT_TYPES,
} from '../../events/index.js';
import type { InMemoryProjection, LogPosition, RecordedEvent } from '../../src/kernel/index.js';
import { ControlPlaneState } from '../control-plane/index.js';
import { buildRoutingSnapshot, type ProviderSettingsRule } from './build-routing-snapshot.js';
import { EMPTY_SNAPSHOT, type RoutingSnapshot } from './routing-snapshot.js';

export const CATALOG_EVENT_TYPES: readonly string[] = [
  ...PROVIDER_EVENT_TYPES, ...DEPLOYMENT_EVENT_TYPES, ...PRICE_EVENT_TYPES, ...ALIAS_EVENT_TYPES,
];

/**
 * What the snapshot folds: the catalog, the content policies, and the tenants and keys they are attached
 * to, so that the policy in force is captured with the routes, from one position of the log.
 */
export const SNAPSHOT_EVENT_TYPES: readonly string[] = [...CATALOG_EVENT_TYPES, ...CONTENT_POLICY_EVENT_TYPES, ...TENANT_EVENT_TYPES, ...API_KEY_EVENT_TYPES];

/** Per node, in memory: folds catalog and content-policy events and swaps in a new immutable routing snapshot. */
export class RoutingSnapshotProjection implements InMemoryProjection {
  readonly name = 'routing-snapshot';
  readonly eventTypes = SNAPSHOT_EVENT_TYPES;
  private readonly logger = new Logger('RoutingSnapshot');
  private catalog = ControlPlaneState.empty();
  private snapshot: RoutingSnapshot = EMPTY_SNAPSHOT;
  private lastProblems: string[] = [];
  private readonly listeners = new Set<(snapshot: RoutingSnapshot) => void>();

  /** `providerProblem`: the catalog's rule for a provider's settings, which every build applies (the bootstrap hands it in). */
  constructor(private readonly providerProblem: ProviderSettingsRule) {}

  /** The snapshot serving traffic now. Capture it once per request. */
  get current(): RoutingSnapshot {
    return this.snapshot;
  }

  /** The folded catalog aggregates (for admin reads, apply diffs and publication checks). */
  get state(): ControlPlaneState {
    return this.catalog;
  }

  get problems(): readonly string[] {
    return this.lastProblems;
  }

  onSwap(listener: (snapshot: RoutingSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  apply(events: readonly RecordedEvent[], _position: LogPosition): void {
    this.catalog = this.catalog.withAll(events);
    const version = events[events.length - 1].globalPosition;
    const build = buildRoutingSnapshot(this.catalog, version, this.snapshot, { providerProblem: this.providerProblem });
    const { snapshot } = build;
    for (const problem of build.problems.filter((p) => !this.lastProblems.includes(p))) this.logger.warn(`kept the previous version: ${problem}`);
    for (const problem of build.contentPolicyProblems.filter((p) => !this.lastProblems.includes(p))) this.logger.warn(problem);
    this.lastProblems = [...build.problems, ...build.contentPolicyProblems];
    this.snapshot = snapshot;
    for (const listener of this.listeners) listener(snapshot);
  }
}
