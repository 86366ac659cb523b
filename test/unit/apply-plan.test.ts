import { decidePlannedStep } from '../support/planned-steps.js';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { ControlPlaneState } from '../../projections/control-plane/control-plane-state.js';
import { type ConfigurationOwned, type PlannedStep, planApply } from '../../src/config/apply/apply-plan.js';
import { parseGatewayConfig } from '../../src/config/gateway-config.js';

process.env.APPLY_PLAN_UPSTREAM_KEY = 'apply-plan-upstream-secret';
process.env.APPLY_PLAN_GATEWAY_KEY = generateApiKey();

const yaml = (deploymentExtra = '') => `
providers:
  - { id: up, type: openai-compatible, baseUrl: "https://llm.example.com/v1", apiKey: "env:APPLY_PLAN_UPSTREAM_KEY" }
deployments:
  - id: d1
    provider: up
    model: m1
    price: { inputPer1M: "1", outputPer1M: "2" }${deploymentExtra}
aliases:
  - { name: chat, routes: [{ deployment: d1 }] }
tenants:
  - { id: acme, limits: { rpm: 60 } }
apiKeys:
  - { id: k3, tenant: acme, key: "env:APPLY_PLAN_GATEWAY_KEY", aliases: [chat] }
`;

const NOW = new Date('2026-03-01T00:00:00Z');

/** The state after the steps, each decided by its aggregate as the command handlers would. */
function run(state: ControlPlaneState, steps: PlannedStep[]): ControlPlaneState {
  for (const step of steps) {
    const [streamId, events] = decidePlannedStep(state, step, { now: NOW, actor: 'config:test.yaml' });
    state = state.with(streamId, events);
  }
  return state;
}


const owned = (o: Partial<{ disabledDeployments: string[]; suspendedTenants: string[] }> = {}): ConfigurationOwned => ({
  disabledDeployments: new Set(o.disabledDeployments ?? []),
  suspendedTenants: new Set(o.suspendedTenants ?? []),
});

describe('apply plan: runtime lifecycle wins over the file', () => {
  const config = parseGatewayConfig(yaml());
  let applied: ControlPlaneState;
  beforeAll(() => {
    applied = run(ControlPlaneState.empty(), planApply(config, ControlPlaneState.empty(), { now: NOW, prune: false }).steps);
  });

  test('the same file against its own result plans nothing and reports no drift', () => {
    expect(planApply(config, applied, { now: NOW, prune: false })).toEqual({ steps: [], problems: [], drift: [] });
  });

  test('an unsafe or unreadable provider change is a problem of the plan itself, so a dry run shows it', () => {
    for (const [from, to, reason] of [
      ['https://llm.example.com/v1', 'http://[::ffff:a9fe:a9fe]/v1', /providers\[0\]: baseUrl points at a cloud metadata address/],
      ['env:APPLY_PLAN_UPSTREAM_KEY', 'env:ADMIN_TOKEN', /providers\[0\]: apiKey env:ADMIN_TOKEN cannot be resolved/],
    ] as const) {
      const plan = planApply(parseGatewayConfig(yaml().replace(from, to)), applied, { now: NOW, prune: false });
      expect(plan.problems).toEqual([expect.stringMatching(reason)]);
      expect(plan.steps.filter((s) => s.family === 'provider')).toEqual([]);
    }
  });

  test('a key revoked at runtime is drift, not a reason to refuse the file', () => {
    const revoked = applied.with('apikey-k3', [{ type: 'ApiKeyRevoked', data: { keyId: 'k3', reason: 'leaked' } }]);
    const plan = planApply(config, revoked, { now: NOW, prune: false });
    expect(plan.problems).toEqual([]);
    expect(plan.steps).toEqual([]);
    expect(plan.drift).toEqual(['apiKeys[0]: key k3 is revoked and stays so; to replace it, issue a new key id']);
  });

  test('an expired key, even one whose secret is gone from the environment, is drift too', () => {
    const expired = applied.with('apikey-k3', [{ type: 'ApiKeyExpired', data: { keyId: 'k3' } }]);
    const saved = process.env.APPLY_PLAN_GATEWAY_KEY;
    delete process.env.APPLY_PLAN_GATEWAY_KEY;
    try {
      const plan = planApply(config, expired, { now: NOW, prune: false });
      expect(plan.problems).toEqual([]);
      expect(plan.drift).toEqual([expect.stringContaining('key k3 is expired')]);
    } finally {
      process.env.APPLY_PLAN_GATEWAY_KEY = saved;
    }
  });

  test('an active key with a different secret is a problem: secrets change only by an explicit rotation', () => {
    const other = parseGatewayConfig(yaml().replace('env:APPLY_PLAN_GATEWAY_KEY', 'env:APPLY_PLAN_OTHER_KEY'));
    process.env.APPLY_PLAN_OTHER_KEY = generateApiKey();
    expect(planApply(other, applied, { now: NOW, prune: false }).problems).toEqual([
      'apiKeys[0].key: key k3 has a different secret; a secret changes only by an explicit rotation (switchyard keys rotate k3)',
    ]);
  });

  test('a key whose grant changes (same id, same secret) is updated in place, and applying again changes nothing', () => {
    const wider = parseGatewayConfig(yaml()
      .replace('  - { name: chat, routes: [{ deployment: d1 }] }', '  - { name: chat, routes: [{ deployment: d1 }] }\n  - { name: chat-2, routes: [{ deployment: d1 }] }')
      .replace('aliases: [chat] }', 'aliases: [chat, chat-2], limits: { rpm: 5 } }'));
    const plan = planApply(wider, applied, { now: NOW, prune: false });
    expect(plan.problems).toEqual([]);
    expect(plan.steps.map((s) => s.summary)).toEqual(['publish alias chat-2', 'update key k3 (aliases, limits)']);
    const after = run(applied, plan.steps);
    expect(after.keys.get('k3')).toMatchObject({ status: 'active', grant: { aliases: ['chat', 'chat-2'], limits: { rpm: 5 } } });
    expect(planApply(wider, after, { now: NOW, prune: false }).steps).toEqual([]);
  });

  test('a key for an alias that is neither declared nor published is refused', () => {
    const typo = parseGatewayConfig(yaml().replace('aliases: [chat] }', 'aliases: [chat, caht] }'));
    expect(planApply(typo, applied, { now: NOW, prune: false }).problems).toEqual(["apiKeys[0].aliases: 'caht' is not a published or declared alias"]);
  });

  test('a tenant suspended at runtime stays suspended and is reported; its limits still follow the file', () => {
    const suspended = applied.with('tenant-acme', [{ type: 'TenantSuspended', data: { tenantId: 'acme', reason: 'fraud' } }]);
    const plan = planApply(parseGatewayConfig(yaml().replace('rpm: 60', 'rpm: 90')), suspended, { now: NOW, prune: false, configurationOwned: owned() });
    expect(plan.problems).toEqual([]);
    expect(plan.steps.map((s) => s.command.type)).toEqual(['SetTenantLimits']);
    expect(plan.drift).toEqual([expect.stringMatching(/^tenants\[0\]: tenant acme was suspended at runtime and stays suspended/)]);
  });

  test('a tenant an earlier apply --prune suspended is reinstated once the file declares it again', () => {
    const suspended = applied.with('tenant-acme', [{ type: 'TenantSuspended', data: { tenantId: 'acme', reason: 'pruned by apply' } }]);
    const plan = planApply(config, suspended, { now: NOW, prune: false, configurationOwned: owned({ suspendedTenants: ['acme'] }) });
    expect(plan.steps.map((s) => s.command)).toEqual([{ type: 'ReinstateTenant', tenantId: 'acme' }]);
    expect(plan.drift).toEqual([]);
  });

  test('a deployment disabled at runtime stays disabled, whether the file says nothing or disabled: false', () => {
    const disabled = applied.with('deployment-d1', [{ type: 'DeploymentDisabled', data: { deploymentId: 'd1', reason: 'incident' } }]);
    for (const file of [config, parseGatewayConfig(yaml('\n    disabled: false'))]) {
      const plan = planApply(file, disabled, { now: NOW, prune: false, configurationOwned: owned() });
      expect(plan.steps).toEqual([]);
      expect(plan.drift).toEqual([expect.stringMatching(/^deployments\[0\]: deployment d1 was disabled at runtime and stays disabled/)]);
    }
  });

  test('a deployment the file disabled is enabled again when the file stops saying so; disabled: true disables', () => {
    const disabled = applied.with('deployment-d1', [{ type: 'DeploymentDisabled', data: { deploymentId: 'd1', reason: 'configuration' } }]);
    const plan = planApply(config, disabled, { now: NOW, prune: false, configurationOwned: owned({ disabledDeployments: ['d1'] }) });
    expect(plan.steps.map((s) => s.command)).toEqual([{ type: 'EnableDeployment', deploymentId: 'd1' }]);
    expect(plan.drift).toEqual([]);
    const disabling = planApply(parseGatewayConfig(yaml('\n    disabled: true')), applied, { now: NOW, prune: false });
    expect(disabling.steps.map((s) => s.command)).toEqual([{ type: 'DisableDeployment', deploymentId: 'd1', reason: 'configuration' }]);
  });
});
