import {
  type AliasDefinition, type AliasEvent, aliasFold, type AliasState, type AliasVisibility, ROUTING_STRATEGIES, type RoutingStrategy,
} from '../../../events/index.js';
import { assertNever, type Decider, DomainError, sameJson } from '../../../src/kernel/index.js';

export type AliasCommand =
  | { type: 'PublishAlias'; alias: string; definition: AliasDefinition }
  | { type: 'RetireAlias'; alias: string; reason: string | null };

/**
 * What an alias gets for what its publisher left out. The admin API and the configuration file both apply
 * these, so the same alias published either way is the same definition (and re-applying the file is a no-op).
 */
export const ALIAS_DEFAULTS = { strategy: 'priority', routePriority: 0, routeWeight: 1, visibility: 'public' } as const satisfies {
  strategy: RoutingStrategy;
  routePriority: number;
  routeWeight: number;
  visibility: AliasVisibility;
};

export const ALIAS_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export function aliasDefinitionProblem(alias: string, definition: AliasDefinition): string | null {
  if (!ALIAS_NAME.test(alias)) return 'alias names use letters, digits, ".", "_", ":" and "-" (at most 128)';
  if (!ROUTING_STRATEGIES.includes(definition.strategy)) return `strategy must be one of ${ROUTING_STRATEGIES.join(', ')}`;
  if (definition.routes.length === 0) return 'an alias needs at least one route';
  const seen = new Set<string>();
  for (const [index, route] of definition.routes.entries()) {
    if (seen.has(route.deploymentId)) return `routes[${index}]: deployment ${route.deploymentId} appears twice`;
    seen.add(route.deploymentId);
    if (!Number.isInteger(route.priority) || route.priority < 0) return `routes[${index}].priority must be a non-negative integer`;
    if (!Number.isFinite(route.weight) || route.weight < 0) return `routes[${index}].weight must be a non-negative number`;
  }
  if (definition.policy.maxAttempts !== null && (!Number.isInteger(definition.policy.maxAttempts) || definition.policy.maxAttempts < 1)) {
    return 'policy.maxAttempts must be a positive integer';
  }
  if (definition.policy.ttftTimeoutMs != null && (!Number.isInteger(definition.policy.ttftTimeoutMs) || definition.policy.ttftTimeoutMs < 1)) {
    return 'policy.ttftTimeoutMs must be a positive integer (milliseconds)';
  }
  const canary = definition.policy.canary;
  if (canary) {
    if (!seen.has(canary.deploymentId)) return `policy.canary.deploymentId: ${canary.deploymentId} is not one of the alias's routes`;
    if (typeof canary.percent !== 'number' || !Number.isFinite(canary.percent) || canary.percent < 0 || canary.percent > 100) {
      return 'policy.canary.percent must be a number from 0 to 100';
    }
    if (typeof canary.salt !== 'string' || canary.salt.length > 64) return 'policy.canary.salt must be a string of at most 64 characters';
  }
  for (const [name, limit] of Object.entries(definition.policy.limits ?? {})) {
    if (!Number.isInteger(limit) || limit < 1) return `policy.limits.${name} must be a positive integer (leave it out for no limit)`;
  }
  if (definition.policy.cache !== undefined && definition.policy.cache !== false) return 'policy.cache is written only as false (the exact cache is on by default)';
  if (definition.visibility !== 'public' && definition.visibility !== 'private') return 'visibility must be public or private';
  const downgrade = definition.policy.budgetDowngrade;
  if (downgrade !== undefined && (!ALIAS_NAME.test(downgrade) || downgrade === alias)) return 'policy.budgetDowngrade must name another alias';
  return null;
}

export const aliasDecider: Decider<AliasCommand, AliasEvent, AliasState> = {
  initialState: aliasFold.initialState,
  evolve: aliasFold.evolve,

  decide(command, state) {
    switch (command.type) {
      case 'PublishAlias': {
        const problem = aliasDefinitionProblem(command.alias, command.definition);
        if (problem) throw new DomainError('invalid_alias', problem, 422);
        if (state.status === 'published' && sameDefinition(state.definition, command.definition)) return [];
        const version = state.status === 'absent' ? 1 : state.version + 1;
        return [{ type: 'AliasPublished', data: { alias: command.alias, version, ...command.definition } }];
      }
      case 'RetireAlias':
        if (state.status === 'absent') throw new DomainError('alias_not_found', `Alias ${command.alias} does not exist`, 404);
        if (state.status === 'retired') throw new DomainError('alias_already_retired', `Alias ${command.alias} is already retired`);
        return [{ type: 'AliasRetired', data: { alias: command.alias, reason: command.reason } }];
      default:
        return assertNever(command);
    }
  },
};

function sameDefinition(a: AliasDefinition, b: AliasDefinition): boolean {
  return sameJson(a, b);
}
