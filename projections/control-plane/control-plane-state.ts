import {
  ALIAS_EVENT_TYPES, aliasFold, type AliasState, API_KEY_EVENT_TYPES, apiKeyFold, type ApiKeyState, CONTENT_POLICY_EVENT_TYPES, contentPolicyFold,
  type ContentPolicyState, DEPLOYMENT_EVENT_TYPES, deploymentFold,
  type DeploymentState, type DomainEvent, type EventOfType, isEventOf, PRICE_EVENT_TYPES, priceFold, type PriceState, PROVIDER_EVENT_TYPES,
  providerFold, type ProviderState, type SwitchyardEventType, TENANT_EVENT_TYPES, tenantFold, type TenantState,
} from '../../events/index.js';
import type { StateFold } from '../../src/kernel/index.js';

const FAMILIES = ['provider', 'deployment', 'price', 'alias', 'tenant', 'apikey', 'content-policy'] as const;

type Family = (typeof FAMILIES)[number];

/**
 * One family's aggregates while a page is folded by the family's own fold (events/, the one its decider
 * decides on), which takes the family's own event types and no other. The map is copied on the page's first event for the family, so a page
 * costs one copy however many of its events it holds.
 */
class FamilyFold<Type extends SwitchyardEventType, State> {
  private folded: Map<string, State> | null = null;

  constructor(
    private readonly types: readonly Type[],
    private readonly fold: StateFold<EventOfType<Type>, State>,
    private readonly before: ReadonlyMap<string, State>,
  ) {}

  apply(id: string, event: DomainEvent): void {
    // The stream named the aggregate; only its decider writes there, so another type never arrives and is not folded.
    if (!isEventOf(this.types, event)) return;
    this.folded ??= new Map(this.before);
    this.folded.set(id, this.fold.evolve(this.folded.get(id) ?? this.fold.initialState(), event));
  }

  get result(): ReadonlyMap<string, State> {
    return this.folded ?? this.before;
  }
}

/**
 * Every control-plane aggregate's state, folded with the aggregates' own folds (events/*-state.ts, which
 * their deciders decide on) so that the projections and the command side can never disagree about what
 * an event means. Immutable:
 * `with` returns a new state sharing untouched maps.
 */
export class ControlPlaneState {
  private constructor(
    readonly providers: ReadonlyMap<string, ProviderState>,
    readonly deployments: ReadonlyMap<string, DeploymentState>,
    readonly prices: ReadonlyMap<string, PriceState>,
    readonly aliases: ReadonlyMap<string, AliasState>,
    readonly tenants: ReadonlyMap<string, TenantState>,
    readonly keys: ReadonlyMap<string, ApiKeyState>,
    readonly contentPolicies: ReadonlyMap<string, ContentPolicyState>,
    /** Version of each stream applied, for If-Match and `apply` diffs. */
    readonly versions: ReadonlyMap<string, number>,
  ) {}

  /**
   * Catalog maps and content policies from one state, access maps (tenants, keys) from another: the two
   * per-node projections (the routing snapshot, which folds content policies, and the key index).
   */
  static combine(catalog: ControlPlaneState, access: ControlPlaneState): ControlPlaneState {
    return new ControlPlaneState(
      catalog.providers, catalog.deployments, catalog.prices, catalog.aliases, access.tenants, access.keys, catalog.contentPolicies,
      new Map([...catalog.versions, ...access.versions]),
    );
  }

  static empty(): ControlPlaneState {
    return new ControlPlaneState(new Map(), new Map(), new Map(), new Map(), new Map(), new Map(), new Map(), new Map());
  }

  /** The state after `events` of `streamId` (e.g. a candidate for safe publication). */
  with(streamId: string, events: readonly DomainEvent[]): ControlPlaneState {
    const version = this.versions.get(streamId) ?? 0;
    return this.withAll(events.map((event, index) => ({ streamId, streamVersion: version + index + 1, ...event })));
  }

  /** The state after a page of recorded events; each touched map is copied once per call. */
  withAll(events: ReadonlyArray<DomainEvent & { streamId: string; streamVersion: number }>): ControlPlaneState {
    const folds = {
      provider: new FamilyFold(PROVIDER_EVENT_TYPES, providerFold, this.providers),
      deployment: new FamilyFold(DEPLOYMENT_EVENT_TYPES, deploymentFold, this.deployments),
      price: new FamilyFold(PRICE_EVENT_TYPES, priceFold, this.prices),
      alias: new FamilyFold(ALIAS_EVENT_TYPES, aliasFold, this.aliases),
      tenant: new FamilyFold(TENANT_EVENT_TYPES, tenantFold, this.tenants),
      apikey: new FamilyFold(API_KEY_EVENT_TYPES, apiKeyFold, this.keys),
      'content-policy': new FamilyFold(CONTENT_POLICY_EVENT_TYPES, contentPolicyFold, this.contentPolicies),
    } satisfies Record<Family, unknown>;
    const versions = new Map(this.versions);
    for (const event of events) {
      const split = splitStream(event.streamId);
      if (!split) continue;
      const [family, id] = split;
      folds[family].apply(id, event);
      versions.set(event.streamId, event.streamVersion);
    }
    return new ControlPlaneState(
      folds.provider.result, folds.deployment.result, folds.price.result, folds.alias.result, folds.tenant.result, folds.apikey.result,
      folds['content-policy'].result, versions,
    );
  }
}

/**
 * `deployment-gpt-4o` → ['deployment', 'gpt-4o']; `content-policy-pii` → ['content-policy', 'pii']. Ids
 * may contain dashes; a family's name may too, and no family's name followed by a dash starts another's.
 */
export function splitStream(streamId: string): [Family, string] | null {
  const family = FAMILIES.find((known) => streamId.length > known.length + 1 && streamId.startsWith(known) && streamId[known.length] === '-');
  return family ? [family, streamId.slice(family.length + 1)] : null;
}
