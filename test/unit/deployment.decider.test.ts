import type { DeploymentEvent, DeploymentSettings } from '../../events/deployment-events.js';
import { deploymentDecider } from '../../modules/catalog/deployment/deployment.decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(deploymentDecider);
const id = 'gpt-4o-mini';

const settings = (overrides: Partial<DeploymentSettings> = {}): DeploymentSettings => ({
  providerId: 'openai-main', model: 'gpt-4o-mini', region: 'us', capabilities: ['chat', 'streaming', 'tools'],
  contextWindow: 128_000, maxOutputTokens: 16_384, quotaGroup: 'openai-tier-4', limits: { rpm: 500, tpm: 200_000, maxConcurrency: 32 },
  ...overrides,
});
const registered = (s = settings()): DeploymentEvent => ({ type: 'DeploymentRegistered', data: { deploymentId: id, ...s } });
const disabled: DeploymentEvent = { type: 'DeploymentDisabled', data: { deploymentId: id, reason: 'incident' } };
const enabled: DeploymentEvent = { type: 'DeploymentEnabled', data: { deploymentId: id } };
const retired: DeploymentEvent = { type: 'DeploymentRetired', data: { deploymentId: id, reason: 'model sunset' } };

describe('deployment aggregate', () => {
  describe('RegisterDeployment', () => {
    test('records capabilities, region, context window, max output, quota group and limits', () => {
      spec.given([]).when({ type: 'RegisterDeployment', deploymentId: id, settings: settings() }).then([registered()]);
    });
    test('the same settings again (capabilities in another order) change nothing', () => {
      const reordered = settings({ capabilities: ['tools', 'chat', 'streaming'] });
      spec.given([registered()]).when({ type: 'RegisterDeployment', deploymentId: id, settings: reordered }).thenNothing();
    });
    test('a duplicate id with different settings is refused', () => {
      spec.given([registered()]).when({ type: 'RegisterDeployment', deploymentId: id, settings: settings({ model: 'gpt-4o' }) })
        .thenThrows('deployment_exists', 422);
    });
    test('a retired id cannot be registered again', () => {
      spec.given([registered(), retired]).when({ type: 'RegisterDeployment', deploymentId: id, settings: settings() })
        .thenThrows('deployment_retired', 409);
    });
    const invalid: Array<[string, Partial<DeploymentSettings>]> = [
      ['no provider', { providerId: '' }],
      ['no model', { model: '' }],
      ['an unknown capability', { capabilities: ['chat', 'telepathy' as 'chat'] }],
      ['a zero context window', { contextWindow: 0 }],
      ['a fractional max output', { maxOutputTokens: 10.5 }],
      ['max output above the context window', { contextWindow: 1000, maxOutputTokens: 2000 }],
      ['a negative limit', { limits: { rpm: -1, tpm: null, maxConcurrency: null } }],
    ];
    test.each(invalid)('refuses %s', (_name, overrides) => {
      spec.given([]).when({ type: 'RegisterDeployment', deploymentId: id, settings: settings(overrides) }).thenThrows('invalid_deployment', 422);
    });
  });

  describe('UpdateDeployment', () => {
    test('changed limits are recorded', () => {
      const next = settings({ limits: { rpm: 1000, tpm: null, maxConcurrency: null } });
      spec.given([registered()]).when({ type: 'UpdateDeployment', deploymentId: id, settings: next })
        .then([{ type: 'DeploymentUpdated', data: { deploymentId: id, ...next } }]);
    });
    test('a disabled deployment can still be updated and stays disabled', () => {
      const next = settings({ region: 'eu' });
      spec.given([registered(), disabled]).when({ type: 'UpdateDeployment', deploymentId: id, settings: next })
        .then([{ type: 'DeploymentUpdated', data: { deploymentId: id, ...next } }]);
      const state = [registered(), disabled, { type: 'DeploymentUpdated', data: { deploymentId: id, ...next } } as DeploymentEvent]
        .reduce(deploymentDecider.evolve, deploymentDecider.initialState());
      expect(state.status).toBe('disabled');
    });
    test('unchanged settings append nothing', () => {
      spec.given([registered()]).when({ type: 'UpdateDeployment', deploymentId: id, settings: settings() }).thenNothing();
    });
    test('an unknown deployment cannot be updated', () => {
      spec.given([]).when({ type: 'UpdateDeployment', deploymentId: id, settings: settings() }).thenThrows('deployment_not_found', 404);
    });
    test('a retired deployment cannot be updated', () => {
      spec.given([registered(), retired]).when({ type: 'UpdateDeployment', deploymentId: id, settings: settings({ region: 'eu' }) })
        .thenThrows('deployment_retired', 409);
    });
    test('an invalid update is refused', () => {
      spec.given([registered()]).when({ type: 'UpdateDeployment', deploymentId: id, settings: settings({ contextWindow: -5 }) })
        .thenThrows('invalid_deployment', 422);
    });
  });

  describe('Disable, Enable and Retire', () => {
    test('an active deployment is disabled', () => {
      spec.given([registered()]).when({ type: 'DisableDeployment', deploymentId: id, reason: 'incident' }).then([disabled]);
    });
    test('disabling twice is refused', () => {
      spec.given([registered(), disabled]).when({ type: 'DisableDeployment', deploymentId: id, reason: null })
        .thenThrows('deployment_already_disabled', 409);
    });
    test('a disabled deployment is enabled', () => {
      spec.given([registered(), disabled]).when({ type: 'EnableDeployment', deploymentId: id }).then([enabled]);
    });
    test('enabling an active deployment is refused', () => {
      spec.given([registered(), disabled, enabled]).when({ type: 'EnableDeployment', deploymentId: id })
        .thenThrows('deployment_already_enabled', 409);
    });
    test('an active or disabled deployment is retired', () => {
      spec.given([registered()]).when({ type: 'RetireDeployment', deploymentId: id, reason: 'model sunset' }).then([retired]);
      spec.given([registered(), disabled]).when({ type: 'RetireDeployment', deploymentId: id, reason: 'model sunset' }).then([retired]);
    });
    test('retirement is final: no disable, enable or second retire', () => {
      spec.given([registered(), retired]).when({ type: 'DisableDeployment', deploymentId: id, reason: null }).thenThrows('deployment_retired', 409);
      spec.given([registered(), retired]).when({ type: 'EnableDeployment', deploymentId: id }).thenThrows('deployment_retired', 409);
      spec.given([registered(), retired]).when({ type: 'RetireDeployment', deploymentId: id, reason: null }).thenThrows('deployment_retired', 409);
    });
    test('commands on an unknown deployment are refused', () => {
      spec.given([]).when({ type: 'DisableDeployment', deploymentId: id, reason: null }).thenThrows('deployment_not_found', 404);
      spec.given([]).when({ type: 'EnableDeployment', deploymentId: id }).thenThrows('deployment_not_found', 404);
      spec.given([]).when({ type: 'RetireDeployment', deploymentId: id, reason: null }).thenThrows('deployment_not_found', 404);
    });
  });
});
