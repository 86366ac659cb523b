import { type AliasPublished, type DomainEvent, isSwitchyardEvent } from '../../events/index.js';
import { buildRoutingSnapshot } from '../../projections/routing-snapshot/index.js';
import type { ControlPlaneState } from '../../projections/control-plane/index.js';
import { DomainError, resolveSecret } from '../../src/kernel/index.js';
import { providerSettingsProblem } from './provider/provider.decider.js';

/**
 * Safe publication: a catalog change is checked against the snapshot it would produce before it is
 * appended. A change that would break an alias (route to a missing, retired or capability-lacking
 * deployment, an unresolvable secret, an unsafe base URL), route new traffic to a disabled deployment,
 * price a deployment that does not exist, or reference a secret this node cannot resolve is refused
 * with 422 and appends nothing, so the running snapshot stays in force.
 */
export function assertSafeCatalogChange(current: ControlPlaneState, streamId: string, events: readonly DomainEvent[]): void {
  const rules = { providerProblem: providerSettingsProblem };
  const before = buildRoutingSnapshot(current, 0, null, rules);
  const after = buildRoutingSnapshot(current.with(streamId, events), 0, null, rules);
  const known = new Set([...before.problems, ...before.deploymentProblems].map(stripVersion));
  const changedAlias = streamId.startsWith('alias-') ? `alias ${streamId.slice('alias-'.length)} ` : null;
  const introduced = [...after.problems, ...after.deploymentProblems].filter(
    (problem) => !known.has(stripVersion(problem)) || (changedAlias !== null && problem.startsWith(changedAlias)),
  );
  const refusals = new Set([...events.flatMap((event) => crossAggregateProblems(current, event)), ...introduced]);
  if (refusals.size > 0) {
    throw new DomainError('unsafe_publication', `The change was not applied because it would break serving: ${[...refusals].join('; ')}`, 422);
  }
}

/** Rules that need another aggregate's state and that the snapshot build alone does not catch. */
function crossAggregateProblems(current: ControlPlaneState, event: DomainEvent): string[] {
  if (!isSwitchyardEvent(event)) return [];
  switch (event.type) {
    case 'AliasPublished':
      return newRoutesToDisabledDeployments(current, event);
    case 'PriceScheduled': {
      const { deploymentId } = event.data;
      const status = current.deployments.get(deploymentId)?.status ?? 'absent';
      if (status === 'absent') return [`price for deployment ${deploymentId}, which does not exist`];
      if (status === 'retired') return [`price for deployment ${deploymentId}, which is retired`];
      return [];
    }
    case 'ProviderRegistered':
    case 'ProviderUpdated': {
      // Checked even before a deployment uses the provider: a reference this node cannot resolve would
      // only surface later, when an alias is published onto it.
      const { providerId, credentialRef } = event.data;
      if (!credentialRef) return [];
      try {
        resolveSecret(credentialRef);
        return [];
      } catch (error) {
        return [`provider ${providerId}: secret ${credentialRef} cannot be resolved (${(error as Error).message})`];
      }
    }
    default:
      return [];
  }
}

/**
 * A disabled deployment stays on the routes that already had it (disabling is an operational switch the
 * route planner honours), but a publication must not add a route to one: it would carry no traffic.
 */
function newRoutesToDisabledDeployments(current: ControlPlaneState, event: AliasPublished): string[] {
  const { alias, routes } = event.data;
  const previous = current.aliases.get(alias);
  const existing = new Set(previous?.status === 'published' ? previous.definition.routes.map((route) => route.deploymentId) : []);
  return routes
    .filter((route) => !existing.has(route.deploymentId) && current.deployments.get(route.deploymentId)?.status === 'disabled')
    .map((route) => `alias ${alias}: route to deployment ${route.deploymentId}, which is disabled`);
}

/** "alias chat v3: …" and "alias chat v4: …" are the same problem. */
function stripVersion(problem: string): string {
  return problem.replace(/^(alias \S+) v\d+:/, '$1:');
}
