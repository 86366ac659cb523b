import { createHash } from 'node:crypto';
import { CONTROL_PLANE_EVENT_TYPES } from '../../events/index.js';
import { ControlPlaneState } from '../../projections/control-plane/index.js';
import type { InMemoryProjection } from '../kernel/projections/projection.js';
import type { LogPosition } from '../kernel/event-store/log-position.js';
import type { RecordedEvent } from '../kernel/event-store/event-store.js';

/**
 * The catalog and access aggregates (providers, deployments, prices, aliases, tenants, keys) folded from
 * the log, as the routing snapshot and the key index fold them when a node starts — without building the
 * snapshot, which resolves provider secrets that a migration neither has nor needs.
 */
export class ControlPlaneFold implements InMemoryProjection {
  readonly name = 'control-plane';
  readonly eventTypes = CONTROL_PLANE_EVENT_TYPES;
  private folded = ControlPlaneState.empty();

  apply(events: readonly RecordedEvent[], _position: LogPosition): void {
    this.folded = this.folded.withAll(events);
  }

  get state(): ControlPlaneState {
    return this.folded;
  }
}

/** What a node would serve from: how many of each aggregate, and a sha256 over all of them (maps in key order). */
export function describeControlPlane(state: ControlPlaneState): string {
  const activeKeys = [...state.keys.values()].filter((key) => key.status === 'active').length;
  const digest = createHash('sha256').update(stableJson({
    providers: state.providers, deployments: state.deployments, prices: state.prices, aliases: state.aliases,
    tenants: state.tenants, keys: state.keys, versions: state.versions,
  })).digest('hex');
  return `providers ${state.providers.size}, deployments ${state.deployments.size}, aliases ${state.aliases.size}, ` +
    `tenants ${state.tenants.size}, keys ${state.keys.size} (${activeKeys} active), sha256 ${digest}`;
}

/** JSON in which maps and sets are written in key order, so equal states give equal text. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item instanceof Map) return [...item.entries()].sort(([a], [b]) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0));
    if (item instanceof Set) return [...item].map(String).sort();
    if (typeof item === 'bigint') return item.toString();
    return item;
  });
}
