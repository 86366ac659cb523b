import type { DomainEvent } from '../../events/index.js';
import { aliasDecider, type AliasState, deploymentDecider, type DeploymentState, priceDecider, type PriceState, providerDecider, type ProviderState } from '../../modules/catalog/index.js';
import { apiKeyDecider, type ApiKeyState, tenantDecider, type TenantState } from '../../modules/access/index.js';
import type { Decider } from '../../src/kernel/index.js';

type AnyDecider = Decider<unknown, DomainEvent, unknown>;

const FAMILIES = {
  provider: providerDecider,
  deployment: deploymentDecider,
  price: priceDecider,
  alias: aliasDecider,
  tenant: tenantDecider,
  apikey: apiKeyDecider,
} as const;

type Family = keyof typeof FAMILIES;

/**
 * Every control-plane aggregate's state, folded with the aggregates' own `evolve` functions so that
 * the projections and the command side can never disagree about what an event means. Immutable:
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
    /** Version of each stream applied, for If-Match and `apply` diffs. */
    readonly versions: ReadonlyMap<string, number>,
  ) {}

  /** Catalog maps from one state, access maps (tenants, keys) from another: the two per-node projections. */
  static combine(catalog: ControlPlaneState, access: ControlPlaneState): ControlPlaneState {
    return new ControlPlaneState(
      catalog.providers, catalog.deployments, catalog.prices, catalog.aliases, access.tenants, access.keys,
      new Map([...catalog.versions, ...access.versions]),
    );
  }

  static empty(): ControlPlaneState {
    return new ControlPlaneState(new Map(), new Map(), new Map(), new Map(), new Map(), new Map(), new Map());
  }

  /** The state after `events` of `streamId` (e.g. a candidate for safe publication). */
  with(streamId: string, events: readonly DomainEvent[]): ControlPlaneState {
    const version = this.versions.get(streamId) ?? 0;
    return this.withAll(events.map((event, index) => ({ streamId, streamVersion: version + index + 1, ...event })));
  }

  /** The state after a page of recorded events; each touched map is copied once per call. */
  withAll(events: ReadonlyArray<DomainEvent & { streamId: string; streamVersion: number }>): ControlPlaneState {
    const maps: Record<Family, ReadonlyMap<string, unknown>> = {
      provider: this.providers, deployment: this.deployments, price: this.prices,
      alias: this.aliases, tenant: this.tenants, apikey: this.keys,
    };
    const copied = new Set<Family>();
    const versions = new Map(this.versions);
    for (const event of events) {
      const split = splitStream(event.streamId);
      if (!split) continue;
      const [family, id] = split;
      if (!copied.has(family)) {
        maps[family] = new Map(maps[family]);
        copied.add(family);
      }
      const decider = FAMILIES[family] as unknown as AnyDecider;
      const map = maps[family] as Map<string, unknown>;
      map.set(id, decider.evolve(map.get(id) ?? decider.initialState(), { type: event.type, data: event.data }));
      versions.set(event.streamId, event.streamVersion);
    }
    return new ControlPlaneState(
      maps.provider as ReadonlyMap<string, ProviderState>,
      maps.deployment as ReadonlyMap<string, DeploymentState>,
      maps.price as ReadonlyMap<string, PriceState>,
      maps.alias as ReadonlyMap<string, AliasState>,
      maps.tenant as ReadonlyMap<string, TenantState>,
      maps.apikey as ReadonlyMap<string, ApiKeyState>,
      versions,
    );
  }
}

/** `deployment-gpt-4o` → ['deployment', 'gpt-4o']; ids may contain dashes, families do not. */
export function splitStream(streamId: string): [Family, string] | null {
  const dash = streamId.indexOf('-');
  if (dash < 0) return null;
  const family = streamId.slice(0, dash);
  if (!(family in FAMILIES)) return null;
  return [family as Family, streamId.slice(dash + 1)];
}
