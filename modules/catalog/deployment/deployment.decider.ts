import { CAPABILITIES, type DeploymentEvent, type DeploymentSettings, deploymentFold, type DeploymentState } from '../../../events/index.js';
import { assertNever, type Decider, DomainError, sameJson } from '../../../src/kernel/index.js';

export type DeploymentCommand =
  | { type: 'RegisterDeployment'; deploymentId: string; settings: DeploymentSettings }
  | { type: 'UpdateDeployment'; deploymentId: string; settings: DeploymentSettings }
  | { type: 'DisableDeployment'; deploymentId: string; reason: string | null }
  | { type: 'EnableDeployment'; deploymentId: string }
  | { type: 'RetireDeployment'; deploymentId: string; reason: string | null };

export function deploymentSettingsProblem(settings: DeploymentSettings): string | null {
  if (!settings.providerId) return 'provider is required';
  if (!settings.model) return 'model is required';
  const unknown = settings.capabilities.filter((c) => !(CAPABILITIES as readonly string[]).includes(c));
  if (unknown.length) return `unknown capabilities: ${unknown.join(', ')} (known: ${CAPABILITIES.join(', ')})`;
  if (!Number.isInteger(settings.contextWindow) || settings.contextWindow <= 0) return 'contextWindow must be a positive integer';
  if (!Number.isInteger(settings.maxOutputTokens) || settings.maxOutputTokens <= 0) return 'maxOutputTokens must be a positive integer';
  if (settings.maxOutputTokens > settings.contextWindow) return 'maxOutputTokens cannot exceed contextWindow';
  for (const [name, value] of Object.entries(settings.limits)) {
    if (value !== null && (!Number.isInteger(value) || value <= 0)) return `limits.${name} must be a positive integer`;
  }
  return null;
}

export const deploymentDecider: Decider<DeploymentCommand, DeploymentEvent, DeploymentState> = {
  initialState: deploymentFold.initialState,
  evolve: deploymentFold.evolve,

  decide(command, state) {
    const id = command.deploymentId;
    switch (command.type) {
      case 'RegisterDeployment':
        validate(command.settings);
        if (state.status === 'absent') return [{ type: 'DeploymentRegistered', data: { deploymentId: id, ...command.settings } }];
        if (state.status === 'retired') throw new DomainError('deployment_retired', `Deployment ${id} is retired; use a new id`);
        if (same(state.settings, command.settings)) return [];
        throw new DomainError('deployment_exists', `Deployment ${id} already exists; update it instead`, 422);
      case 'UpdateDeployment': {
        validate(command.settings);
        const current = requireLive(state, id);
        if (same(current.settings, command.settings)) return [];
        return [{ type: 'DeploymentUpdated', data: { deploymentId: id, ...command.settings } }];
      }
      case 'DisableDeployment':
        if (requireLive(state, id).status === 'disabled') throw new DomainError('deployment_already_disabled', `Deployment ${id} is already disabled`);
        return [{ type: 'DeploymentDisabled', data: { deploymentId: id, reason: command.reason } }];
      case 'EnableDeployment':
        if (requireLive(state, id).status === 'active') throw new DomainError('deployment_already_enabled', `Deployment ${id} is already enabled`);
        return [{ type: 'DeploymentEnabled', data: { deploymentId: id } }];
      case 'RetireDeployment':
        requireLive(state, id);
        return [{ type: 'DeploymentRetired', data: { deploymentId: id, reason: command.reason } }];
      default:
        return assertNever(command);
    }
  },
};

function validate(settings: DeploymentSettings): void {
  const problem = deploymentSettingsProblem(settings);
  if (problem) throw new DomainError('invalid_deployment', problem, 422);
}

function requireLive(state: DeploymentState, id: string) {
  if (state.status === 'absent') throw new DomainError('deployment_not_found', `Deployment ${id} does not exist`, 404);
  if (state.status === 'retired') throw new DomainError('deployment_retired', `Deployment ${id} is retired`);
  return state;
}

function same(a: DeploymentSettings, b: DeploymentSettings): boolean {
  const norm = (s: DeploymentSettings) => ({ ...s, capabilities: [...s.capabilities].sort() });
  return sameJson(norm(a), norm(b));
}
