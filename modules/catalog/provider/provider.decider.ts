import { PROVIDER_TYPES, type ProviderEvent, type ProviderSettings, providerFold, type ProviderState } from '../../../events/index.js';
import { assertNever, type Decider, DomainError, isSecretRef, sameJson } from '../../../src/kernel/index.js';
import { baseUrlProblem } from './base-url-policy.js';

export type ProviderCommand =
  | { type: 'RegisterProvider'; providerId: string; settings: ProviderSettings }
  | { type: 'UpdateProvider'; providerId: string; settings: ProviderSettings }
  | { type: 'RemoveProvider'; providerId: string; reason: string | null };

const NEEDS_BASE_URL = new Set(['openai-compatible', 'azure-openai']);

export function providerSettingsProblem(settings: ProviderSettings): string | null {
  if (!PROVIDER_TYPES.includes(settings.type)) return `type must be one of ${PROVIDER_TYPES.join(', ')}`;
  if (settings.baseUrl) {
    const problem = baseUrlProblem(settings.baseUrl, settings.allowPrivateNetwork);
    if (problem) return problem;
  } else if (NEEDS_BASE_URL.has(settings.type)) {
    return `a ${settings.type} provider needs a baseUrl`;
  }
  if (settings.credentialRef !== null && !isSecretRef(settings.credentialRef)) {
    return 'apiKey must be a secret reference (env:NAME or file:PATH), never the secret itself';
  }
  if (settings.type === 'azure-openai' && !settings.apiVersion) return 'an azure-openai provider needs an apiVersion';
  if (settings.type === 'bedrock' && !settings.region) return 'a bedrock provider needs a region';
  return null;
}

export const providerDecider: Decider<ProviderCommand, ProviderEvent, ProviderState> = {
  initialState: providerFold.initialState,
  evolve: providerFold.evolve,

  decide(command, state) {
    switch (command.type) {
      case 'RegisterProvider': {
        validate(command.settings);
        if (state.status === 'removed') throw new DomainError('provider_removed', `Provider ${command.providerId} was removed; use a new id`);
        if (state.status === 'active') {
          if (sameSettings(state.settings, command.settings)) return [];
          throw new DomainError('provider_exists', `Provider ${command.providerId} already exists; update it instead`, 422);
        }
        return [{ type: 'ProviderRegistered', data: { providerId: command.providerId, ...command.settings } }];
      }
      case 'UpdateProvider': {
        validate(command.settings);
        const current = requireActive(state, command.providerId);
        if (sameSettings(current.settings, command.settings)) return [];
        return [{ type: 'ProviderUpdated', data: { providerId: command.providerId, ...command.settings } }];
      }
      case 'RemoveProvider':
        requireActive(state, command.providerId);
        return [{ type: 'ProviderRemoved', data: { providerId: command.providerId, reason: command.reason } }];
      default:
        return assertNever(command);
    }
  },
};

function validate(settings: ProviderSettings): void {
  const problem = providerSettingsProblem(settings);
  if (problem) throw new DomainError('invalid_provider', problem, 422);
}

function requireActive(state: ProviderState, providerId: string) {
  if (state.status === 'absent') throw new DomainError('provider_not_found', `Provider ${providerId} does not exist`, 404);
  if (state.status === 'removed') throw new DomainError('provider_removed', `Provider ${providerId} was removed`);
  return state;
}

function sameSettings(a: ProviderSettings, b: ProviderSettings): boolean {
  return sameJson(a, b);
}
