import type { DomainEvent } from '../../events/event.js';
import { buildRoutingSnapshot } from '../../projections/routing-snapshot/build-routing-snapshot.js';
import type { ControlPlaneState } from '../../projections/control-plane/control-plane-state.js';
import { DomainError } from '../../src/kernel/commands/decider.js';

/**
 * Safe publication: a catalog change is checked against the snapshot it would produce before it is
 * appended. A change that would break an alias (route to a missing, retired or capability-lacking
 * deployment, an unresolvable secret, an unsafe base URL) is refused with 422 and appends nothing, so
 * the running snapshot stays in force.
 */
export function assertSafeCatalogChange(current: ControlPlaneState, streamId: string, events: readonly DomainEvent[]): void {
  const before = buildRoutingSnapshot(current, 0, null);
  const after = buildRoutingSnapshot(current.with(streamId, events), 0, null);
  const known = new Set([...before.problems, ...before.deploymentProblems].map(stripVersion));
  const changedAlias = streamId.startsWith('alias-') ? `alias ${streamId.slice('alias-'.length)} ` : null;
  const introduced = [...after.problems, ...after.deploymentProblems].filter(
    (problem) => !known.has(stripVersion(problem)) || (changedAlias !== null && problem.startsWith(changedAlias)),
  );
  if (introduced.length > 0) {
    throw new DomainError('unsafe_publication', `The change was not applied because it would break serving: ${introduced.join('; ')}`, 422);
  }
}

/** "alias chat v3: …" and "alias chat v4: …" are the same problem. */
function stripVersion(problem: string): string {
  return problem.replace(/^(alias \S+) v\d+:/, '$1:');
}
