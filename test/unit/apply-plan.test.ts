import { PLAN_LOG_NOW, PlanLog as Log } from '../support/plan-log.js';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { ControlPlaneState } from '../../projections/control-plane/control-plane-state.js';
import { type Drift, planApply } from '../../src/config/apply/apply-plan.js';
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

const NOW = PLAN_LOG_NOW;

const messages = (drift: Drift[]) => drift.map((d) => d.message);

describe('apply plan: runtime lifecycle wins over the file', () => {
  const config = parseGatewayConfig(yaml());
  let applied: Log;
  beforeAll(() => {
    applied = new Log().run(planApply(config, ControlPlaneState.empty(), { now: NOW, prune: false }).steps);
  });

  test('the same file against its own result plans nothing and reports no drift', () => {
    expect(applied.plan(config)).toEqual({ steps: [], problems: [], drift: [], adoptions: [] });
  });

  test('an unsafe or unreadable provider change is a problem of the plan itself, so a dry run shows it', () => {
    for (const [from, to, reason] of [
      ['https://llm.example.com/v1', 'http://[::ffff:a9fe:a9fe]/v1', /providers\[0\]: baseUrl points at a cloud metadata address/],
      ['env:APPLY_PLAN_UPSTREAM_KEY', 'env:ADMIN_TOKEN', /providers\[0\]: apiKey env:ADMIN_TOKEN cannot be resolved/],
    ] as const) {
      const plan = applied.plan(parseGatewayConfig(yaml().replace(from, to)));
      expect(plan.problems).toEqual([expect.stringMatching(reason)]);
      expect(plan.steps.filter((s) => s.family === 'provider')).toEqual([]);
    }
  });

  test('a key revoked at runtime is drift, not a reason to refuse the file, and names who revoked it', () => {
    const revoked = applied.copy().record('apikey-k3', [{ type: 'ApiKeyRevoked', data: { keyId: 'k3', reason: 'leaked' } }], 'admin:root');
    const plan = revoked.plan(config);
    expect(plan.problems).toEqual([]);
    expect(plan.steps).toEqual([]);
    expect(plan.drift).toEqual([expect.objectContaining({ path: 'apiKeys[0]', field: 'status', file: 'active', running: 'revoked', changedBy: 'admin:root' })]);
    expect(messages(plan.drift)).toEqual([expect.stringMatching(/^apiKeys\[0\]: key k3 is revoked and stays so \(by admin:root at 2026-[^)]+\); to replace it, issue a new key id$/)]);
  });

  test('an expired key, even one whose secret is gone from the environment, is drift too', () => {
    const expired = applied.copy().record('apikey-k3', [{ type: 'ApiKeyExpired', data: { keyId: 'k3' } }], 'system:key-expiry');
    const saved = process.env.APPLY_PLAN_GATEWAY_KEY;
    delete process.env.APPLY_PLAN_GATEWAY_KEY;
    try {
      const plan = expired.plan(config);
      expect(plan.problems).toEqual([]);
      expect(messages(plan.drift)).toEqual([expect.stringContaining('key k3 is expired')]);
    } finally {
      process.env.APPLY_PLAN_GATEWAY_KEY = saved;
    }
  });

  test('an active key with a different secret is a problem: secrets change only by an explicit rotation', () => {
    const other = parseGatewayConfig(yaml().replace('env:APPLY_PLAN_GATEWAY_KEY', 'env:APPLY_PLAN_OTHER_KEY'));
    process.env.APPLY_PLAN_OTHER_KEY = generateApiKey();
    expect(applied.plan(other).problems).toEqual([
      'apiKeys[0].key: key k3 has a different secret; a secret changes only by an explicit rotation (switchyard keys rotate k3)',
    ]);
  });

  test('a key whose grant changes (same id, same secret) is updated in place, field by field, and applying again changes nothing', () => {
    const wider = parseGatewayConfig(yaml()
      .replace('  - { name: chat, routes: [{ deployment: d1 }] }', '  - { name: chat, routes: [{ deployment: d1 }] }\n  - { name: chat-2, routes: [{ deployment: d1 }] }')
      .replace('aliases: [chat] }', 'aliases: [chat, chat-2], limits: { rpm: 5 } }'));
    const log = applied.copy();
    const plan = log.plan(wider);
    expect(plan.problems).toEqual([]);
    expect(plan.steps.map((s) => s.summary)).toEqual(['publish alias chat-2', 'update key k3 (aliases, limits)']);
    expect(plan.steps[1].changes).toEqual([
      { field: 'aliases', from: ['chat'], to: ['chat', 'chat-2'] },
      { field: 'limits.rpm', from: null, to: 5 },
    ]);
    log.run(plan.steps);
    expect(log.state.keys.get('k3')).toMatchObject({ status: 'active', grant: { aliases: ['chat', 'chat-2'], limits: { rpm: 5 } } });
    expect(log.plan(wider).steps).toEqual([]);
  });

  test('a key for an alias that is neither declared nor published is refused', () => {
    const typo = parseGatewayConfig(yaml().replace('aliases: [chat] }', 'aliases: [chat, caht] }'));
    expect(applied.plan(typo).problems).toEqual(["apiKeys[0].aliases: 'caht' is not a published or declared alias"]);
  });

  test('a tenant suspended at runtime stays suspended and is reported; its limits still follow the file', () => {
    const suspended = applied.copy().record('tenant-acme', [{ type: 'TenantSuspended', data: { tenantId: 'acme', reason: 'fraud' } }], 'admin:root');
    const plan = suspended.plan(parseGatewayConfig(yaml().replace('rpm: 60', 'rpm: 90')));
    expect(plan.problems).toEqual([]);
    expect(plan.steps.map((s) => s.command.type)).toEqual(['SetTenantLimits']);
    expect(messages(plan.drift)).toEqual([expect.stringMatching(/^tenants\[0\]: tenant acme was suspended at runtime and stays suspended/)]);
  });

  test('a tenant an earlier apply --prune suspended is reinstated once the file declares it again', () => {
    const suspended = applied.copy().record('tenant-acme', [{ type: 'TenantSuspended', data: { tenantId: 'acme', reason: 'pruned by apply' } }], 'config:test.yaml');
    const plan = suspended.plan(config);
    expect(plan.steps.map((s) => s.command)).toEqual([{ type: 'ReinstateTenant', tenantId: 'acme' }]);
    expect(plan.drift).toEqual([]);
  });

  test('a deployment disabled at runtime stays disabled, whether the file says nothing or disabled: false', () => {
    const disabled = applied.copy().record('deployment-d1', [{ type: 'DeploymentDisabled', data: { deploymentId: 'd1', reason: 'incident' } }], 'admin:root');
    for (const file of [config, parseGatewayConfig(yaml('\n    disabled: false'))]) {
      const plan = disabled.plan(file);
      expect(plan.steps).toEqual([]);
      expect(messages(plan.drift)).toEqual([expect.stringMatching(/^deployments\[0\]: deployment d1 was disabled at runtime and stays disabled/)]);
    }
  });

  test('a deployment the file disabled is enabled again when the file stops saying so; disabled: true disables', () => {
    const disabled = applied.copy().record('deployment-d1', [{ type: 'DeploymentDisabled', data: { deploymentId: 'd1', reason: 'configuration' } }], 'config:test.yaml');
    const plan = disabled.plan(config);
    expect(plan.steps.map((s) => s.command)).toEqual([{ type: 'EnableDeployment', deploymentId: 'd1' }]);
    expect(plan.drift).toEqual([]);
    const disabling = applied.plan(parseGatewayConfig(yaml('\n    disabled: true')));
    expect(disabling.steps.map((s) => s.command)).toEqual([{ type: 'DisableDeployment', deploymentId: 'd1', reason: 'configuration' }]);
  });
});

describe('apply plan: who owns a field', () => {
  const config = parseGatewayConfig(yaml());
  let applied: Log;
  beforeAll(() => {
    applied = new Log().run(planApply(config, ControlPlaneState.empty(), { now: NOW, prune: false }).steps);
  });

  /** The alias as an admin's PUT would publish it: the running definition with one policy member changed. */
  const editAlias = (log: Log, policy: Record<string, unknown>) => {
    const current = log.state.aliases.get('chat');
    if (current?.status !== 'published') throw new Error('chat is not published');
    return log.run([{
      family: 'alias', path: 'admin', summary: 'PUT', changes: [],
      command: { type: 'PublishAlias', alias: 'chat', definition: { ...current.definition, policy: { ...current.definition.policy, ...policy } } },
    }], 'admin:root');
  };

  test('an API edit of a field the file declares is kept and reported field by field, with who, when and what to do', () => {
    const edited = editAlias(applied.copy(), { maxAttempts: 2 });
    const plan = edited.plan(config);
    expect(plan.problems).toEqual([]);
    expect(plan.steps).toEqual([]);
    expect(plan.drift).toEqual([{
      path: 'aliases[0]', definition: 'alias chat', field: 'policy.maxAttempts', file: null, running: 2, changedBy: 'admin:root', changedAt: expect.any(Date),
      resolution: expect.stringContaining('switchyard config export'), message: expect.stringMatching(/^aliases\[0\] alias chat: policy\.maxAttempts: file null, running 2 \(set by admin:root at 2026-/),
    }]);
    expect(plan.drift[0].message).toContain('--overwrite-runtime-edits');
  });

  test('a file edit of another field applies the file\'s field and keeps the API\'s', () => {
    const edited = editAlias(applied.copy(), { maxAttempts: 2 });
    const plan = edited.plan(parseGatewayConfig(yaml().replace('routes: [{ deployment: d1 }] }', 'routes: [{ deployment: d1 }], policy: { ttftTimeoutMs: 5000 } }')));
    expect(plan.steps.map((s) => s.changes)).toEqual([[{ field: 'policy.ttftTimeoutMs', from: null, to: 5000 }]]);
    expect(plan.steps[0].command).toMatchObject({ type: 'PublishAlias', definition: { policy: { maxAttempts: 2, ttftTimeoutMs: 5000 } } });
    expect(plan.drift.map((d) => d.field)).toEqual(['policy.maxAttempts']);
  });

  test('--overwrite-runtime-edits applies the file over the API edit and says whose edit it overwrites', () => {
    const edited = editAlias(applied.copy(), { maxAttempts: 2 });
    const plan = edited.plan(config, { overwriteRuntimeEdits: true });
    expect(plan.drift).toEqual([]);
    expect(plan.steps.map((s) => s.changes)).toEqual([[{ field: 'policy.maxAttempts', from: 2, to: null, overwrites: { actor: 'admin:root', at: expect.any(Date), eventId: expect.any(String) } }]]);
    edited.run(plan.steps);
    expect(edited.plan(config)).toEqual({ steps: [], problems: [], drift: [], adoptions: [] });
  });

  test('once the file applied a field again, the file owns it: a later file edit of it applies', () => {
    const log = editAlias(applied.copy(), { maxAttempts: 2 });
    log.run(log.plan(parseGatewayConfig(yaml().replace('routes: [{ deployment: d1 }] }', 'routes: [{ deployment: d1 }], policy: { maxAttempts: 4 } }')), { overwriteRuntimeEdits: true }).steps);
    const plan = log.plan(parseGatewayConfig(yaml().replace('routes: [{ deployment: d1 }] }', 'routes: [{ deployment: d1 }], policy: { maxAttempts: 3 } }')));
    expect(plan.drift).toEqual([]);
    expect(plan.steps.map((s) => s.changes)).toEqual([[{ field: 'policy.maxAttempts', from: 4, to: 3 }]]);
  });

  test('a price scheduled through the API is not superseded by the file\'s: each differing member is drift', () => {
    const log = applied.copy().record('price-d1', [{
      type: 'PriceScheduled',
      data: { deploymentId: 'd1', effectiveFrom: '2026-03-05T00:00:00.000Z', inputPer1M: '1.5', outputPer1M: '2', cachedInputPer1M: null, cacheWritePer1M: null, reasoningPer1M: null, currency: 'USD' },
    }], 'admin:root');
    const plan = log.plan(config);
    expect(plan.steps).toEqual([]);
    expect(plan.drift.map((d) => [d.path, d.field, d.file, d.running, d.changedBy])).toEqual([['deployments[0]', 'price.inputPer1M', '1', '1.5', 'admin:root']]);
    expect(plan.drift[0].message).toContain('price version 2 from 2026-03-05T00:00:00.000Z');
    // Prices are never edited: the file's price cannot replace a later one without a start of its own after it.
    expect(log.plan(config, { overwriteRuntimeEdits: true }).problems).toEqual([expect.stringMatching(/^deployments\[0\]\.price: price version 2 of d1 starts at 2026-03-05T00:00:00\.000Z, later than now/)]);
    const later = parseGatewayConfig(yaml().replace('outputPer1M: "2" }', 'outputPer1M: "2", effectiveFrom: "2026-03-06T00:00:00Z" }'));
    const overwrite = log.plan(later, { overwriteRuntimeEdits: true });
    expect(overwrite.steps.map((s) => s.command)).toEqual([expect.objectContaining({ type: 'SchedulePrice', effectiveFrom: new Date('2026-03-06T00:00:00Z') })]);
  });

  test('a price scheduled through the API from now is superseded with --overwrite-runtime-edits, and the file owns the price again', () => {
    const LATER = new Date('2026-03-02T00:00:00Z');
    const log = applied.copy().record('price-d1', [{
      type: 'PriceScheduled',
      data: { deploymentId: 'd1', effectiveFrom: '2026-03-01T12:00:00.000Z', inputPer1M: '1.5', outputPer1M: '2', cachedInputPer1M: null, cacheWritePer1M: null, reasoningPer1M: null, currency: 'USD' },
    }], 'admin:root');
    expect(log.plan(config, { now: LATER }).drift.map((d) => d.field)).toEqual(['price.inputPer1M']);
    const overwrite = log.plan(config, { now: LATER, overwriteRuntimeEdits: true });
    expect(overwrite.steps.map((s) => s.changes)).toEqual([[{ field: 'price.inputPer1M', from: '1.5', to: '1', overwrites: { actor: 'admin:root', at: expect.any(Date), eventId: expect.any(String) } }]]);
    log.run(overwrite.steps);
    expect(log.plan(config, { now: LATER })).toEqual({ steps: [], problems: [], drift: [], adoptions: [] });
  });

  test('tenant limits set through the API are kept; the file\'s budget still applies', () => {
    const log = applied.copy().record('tenant-acme', [{ type: 'TenantLimitsSet', data: { tenantId: 'acme', limits: { rpm: 10, tpm: null, maxConcurrency: 3 } } }], 'admin:root');
    const plan = log.plan(parseGatewayConfig(yaml().replace('limits: { rpm: 60 } }', 'limits: { rpm: 60 }, budget: { monthlyUsd: "50" } }')));
    expect(plan.drift.map((d) => [d.field, d.file, d.running])).toEqual([['limits.maxConcurrency', null, 3], ['limits.rpm', 60, 10]]);
    expect(plan.steps.map((s) => s.command.type)).toEqual(['SetTenantBudget']);
    expect(plan.steps[0].changes).toEqual([
      { field: 'budget.enforcement', from: null, to: 'hard' }, { field: 'budget.monthlyUsd', from: null, to: '50' }, { field: 'budget.softPct', from: null, to: 80 },
    ]);
  });

  test('a definition created through the API and not in the file is left alone; one the file creates follows the file', () => {
    const log = applied.copy().record('tenant-globex', [{ type: 'TenantCreated', data: { tenantId: 'globex', name: 'Globex' } }], 'admin:root');
    expect(log.plan(config)).toEqual({ steps: [], problems: [], drift: [], adoptions: [] });
    const declared = log.plan(parseGatewayConfig(`${yaml()}\n`.replace('tenants:\n', 'tenants:\n  - { id: globex, limits: { rpm: 5 } }\n')));
    // Declared later with a value of its own: the tenant's fields were never the file's, but limits were never set by anyone.
    expect(declared.steps.map((s) => s.summary)).toEqual(['set limits of tenant globex']);
    expect(declared.drift).toEqual([]);
  });

  test('a provider credential changed through the API is kept as its reference; the plan never shows a resolved secret', () => {
    const current = applied.state.providers.get('up');
    if (current?.status !== 'active') throw new Error('up is not active');
    const log = applied.copy().record('provider-up', [{ type: 'ProviderUpdated', data: { providerId: 'up', ...current.settings, credentialRef: 'env:APPLY_PLAN_ROTATED' } }], 'admin:root');
    const plan = log.plan(config);
    expect(plan.drift.map((d) => [d.field, d.file, d.running])).toEqual([['credentialRef', 'env:APPLY_PLAN_UPSTREAM_KEY', 'env:APPLY_PLAN_ROTATED']]);
    expect(JSON.stringify(plan)).not.toContain('apply-plan-upstream-secret');
  });

  test('a key given as its stored hash matches the key issued from its plaintext', () => {
    const hash = applied.state.keys.get('k3')!;
    if (hash.status === 'absent') throw new Error('k3 is absent');
    const byHash = parseGatewayConfig(yaml().replace('key: "env:APPLY_PLAN_GATEWAY_KEY"', `key: "sha256:${hash.hash}"`));
    expect(applied.plan(byHash)).toEqual({ steps: [], problems: [], drift: [], adoptions: [] });
    const issued = new Log().run(planApply(byHash, ControlPlaneState.empty(), { now: NOW, prune: false }).steps);
    expect(issued.state.keys.get('k3')).toMatchObject({ status: 'active', hash: hash.hash, prefix: 'sk-sy-…' });
  });
});

describe('apply plan: a file that says what a runtime edit set adopts it', () => {
  const config = parseGatewayConfig(yaml());
  const withPolicy = (policy: string) => parseGatewayConfig(yaml().replace('routes: [{ deployment: d1 }] }', `routes: [{ deployment: d1 }], policy: { ${policy} } }`));
  let applied: Log;
  beforeAll(() => {
    applied = new Log().run(planApply(config, ControlPlaneState.empty(), { now: NOW, prune: false }).steps);
  });
  const editAlias = (log: Log, policy: Record<string, unknown>) => {
    const current = log.state.aliases.get('chat');
    if (current?.status !== 'published') throw new Error('chat is not published');
    return log.run([{
      family: 'alias', path: 'admin', summary: 'PUT', changes: [],
      command: { type: 'PublishAlias', alias: 'chat', definition: { ...current.definition, policy: { ...current.definition.policy, ...policy } } },
    }], 'admin:root');
  };

  test('a file agreeing with an API edit adopts that field, once: no step, no drift, and then a file edit of it applies', () => {
    const log = editAlias(applied.copy(), { maxAttempts: 2 });
    const agreeing = withPolicy('maxAttempts: 2');
    const plan = log.plan(agreeing);
    expect(plan.steps).toEqual([]);
    expect(plan.drift).toEqual([]);
    expect(plan.adoptions).toEqual([{
      path: 'aliases[0]', definition: 'alias chat', family: 'alias', id: 'chat', field: 'policy.maxAttempts', tracked: 'policy.maxAttempts', value: 2,
      adopts: { actor: 'admin:root', at: expect.any(Date), eventId: 'alias-chat-2' },
      message: expect.stringMatching(/^aliases\[0\] alias chat: policy\.maxAttempts: 2 \(set by admin:root at 2026-03-01T00:00:\d\d\.000Z\)$/),
    }]);
    const events = log.adopt(plan);
    // Field paths and event ids, never values.
    expect(events).toEqual([{
      type: 'ConfigurationAdopted',
      data: { source: 'test.yaml', definitions: [{ stream: 'alias-chat', fields: [{ field: 'policy.maxAttempts', eventId: 'alias-chat-2', actor: 'admin:root', recordedAt: expect.any(String) }] }] },
    }]);
    // Idempotent: the plan no longer finds it, and the aggregate would not record it twice.
    expect(log.plan(agreeing)).toEqual({ steps: [], problems: [], drift: [], adoptions: [] });
    expect(log.adopt(plan)).toEqual([]);
    const edited = log.plan(withPolicy('maxAttempts: 3'));
    expect(edited.drift).toEqual([]);
    expect(edited.steps.map((s) => s.changes)).toEqual([[{ field: 'policy.maxAttempts', from: 2, to: 3 }]]);
  });

  test('a runtime edit after the adoption is drift again; a file disagreeing adopts nothing', () => {
    const log = editAlias(applied.copy(), { maxAttempts: 2 });
    expect(log.plan(config).adoptions).toEqual([]);
    log.adopt(log.plan(withPolicy('maxAttempts: 2')));
    editAlias(log, { maxAttempts: 5 });
    const plan = log.plan(withPolicy('maxAttempts: 2'));
    expect(plan.adoptions).toEqual([]);
    expect(plan.drift.map((d) => [d.field, d.file, d.running, d.changedBy])).toEqual([['policy.maxAttempts', 2, 5, 'admin:root']]);
  });

  test('only the agreeing fields of an edit are adopted; the others stay drift', () => {
    const log = applied.copy().record('tenant-acme', [{ type: 'TenantLimitsSet', data: { tenantId: 'acme', limits: { rpm: 10, tpm: null, maxConcurrency: 3 } } }], 'admin:root');
    const plan = log.plan(parseGatewayConfig(yaml().replace('limits: { rpm: 60 } }', 'limits: { rpm: 10 } }')));
    expect(plan.adoptions.map((a) => [a.field, a.value])).toEqual([['limits.rpm', 10]]);
    expect(plan.drift.map((d) => [d.field, d.file, d.running])).toEqual([['limits.maxConcurrency', null, 3]]);
    log.adopt(plan);
    const later = log.plan(parseGatewayConfig(yaml().replace('limits: { rpm: 60 } }', 'limits: { rpm: 20, maxConcurrency: 3 } }')));
    expect(later.steps.map((s) => s.changes)).toEqual([[{ field: 'limits.rpm', from: 10, to: 20 }]]);
    expect(later.adoptions.map((a) => a.field)).toEqual(['limits.maxConcurrency']);
    expect(later.drift).toEqual([]);
  });

  test('a price version scheduled through the API that the file says is adopted whole; the file\'s next price is then scheduled', () => {
    const log = applied.copy().record('price-d1', [{
      type: 'PriceScheduled',
      data: { deploymentId: 'd1', effectiveFrom: '2026-03-01T00:00:00.000Z', inputPer1M: '1.5', outputPer1M: '2', cachedInputPer1M: null, cacheWritePer1M: null, reasoningPer1M: null, currency: 'USD' },
    }], 'admin:root');
    const agreeing = parseGatewayConfig(yaml().replace('inputPer1M: "1"', 'inputPer1M: "1.50"'));
    const plan = log.plan(agreeing);
    expect(plan.steps).toEqual([]);
    expect(plan.drift).toEqual([]);
    expect(plan.adoptions.map((a) => [a.path, a.field, a.tracked, a.value])).toEqual([
      ['deployments[0]', 'price.currency', 'v2.currency', 'USD'], ['deployments[0]', 'price.effectiveFrom', 'v2.effectiveFrom', '2026-03-01T00:00:00.000Z'],
      ['deployments[0]', 'price.inputPer1M', 'v2.inputPer1M', '1.5'], ['deployments[0]', 'price.outputPer1M', 'v2.outputPer1M', '2'],
    ]);
    expect(plan.adoptions[0].message).toContain('price version 2 from 2026-03-01T00:00:00.000Z');
    log.adopt(plan);
    expect(log.plan(agreeing).adoptions).toEqual([]);
    const next = log.plan(parseGatewayConfig(yaml().replace('inputPer1M: "1"', 'inputPer1M: "1.75"')), { now: new Date('2026-03-02T00:00:00Z') });
    expect(next.drift).toEqual([]);
    expect(next.steps.map((s) => s.changes)).toEqual([[{ field: 'price.inputPer1M', from: '1.5', to: '1.75' }]]);
  });

  test('a deployment disabled at runtime that the file disables too is adopted: the file may enable it later', () => {
    const log = applied.copy().record('deployment-d1', [{ type: 'DeploymentDisabled', data: { deploymentId: 'd1', reason: 'incident' } }], 'admin:root');
    const plan = log.plan(parseGatewayConfig(yaml('\n    disabled: true')));
    expect(plan.steps).toEqual([]);
    expect(plan.adoptions.map((a) => [a.path, a.field, a.value])).toEqual([['deployments[0].disabled', 'status', 'disabled']]);
    log.adopt(plan);
    expect(log.plan(config).steps.map((s) => s.summary)).toEqual(['enable deployment d1']);
  });

  test('a definition the file creates has nothing to adopt; one made through the API and then declared as it is adopts what the API set', () => {
    expect(applied.plan(config).adoptions).toEqual([]);
    const log = applied.copy().record('tenant-globex', [
      { type: 'TenantCreated', data: { tenantId: 'globex', name: 'globex' } },
      { type: 'TenantLimitsSet', data: { tenantId: 'globex', limits: { rpm: 5, tpm: null, maxConcurrency: null } } },
    ], 'admin:root');
    const plan = log.plan(parseGatewayConfig(yaml().replace('tenants:\n', 'tenants:\n  - { id: globex, limits: { rpm: 5 } }\n')));
    expect(plan.steps).toEqual([]);
    expect(plan.adoptions.map((a) => [a.definition, a.field])).toEqual([['tenant globex', 'limits.rpm']]);
  });
});

describe('apply plan: a content policy moderating through an alias', () => {
  const moderated = (policies = true, moderator = true, moderatorRoute = 'mod') => `
providers:
  - { id: up, type: openai-compatible, baseUrl: "https://llm.example.com/v1", apiKey: "env:APPLY_PLAN_UPSTREAM_KEY" }
deployments:
  - { id: d1, provider: up, model: m1, price: { inputPer1M: "1", outputPer1M: "2" } }
  - { id: mod, provider: up, model: omni-moderation, capabilities: [moderation], price: { inputPer1M: "0", outputPer1M: "0" } }
aliases:
  - { name: chat, routes: [{ deployment: d1 }] }
${moderator ? `  - { name: moderator, routes: [{ deployment: ${moderatorRoute} }] }\n` : ''}${policies ? 'contentPolicies:\n  - { id: moderated, moderation: { alias: moderator } }\n' : ''}`;

  test('the alias is judged on the file: declared with a moderation route, accepted; routed to a chat deployment, a problem at its path', () => {
    expect(new Log().plan(parseGatewayConfig(moderated())).problems).toEqual([]);
    expect(new Log().plan(parseGatewayConfig(moderated(true, true, 'd1'))).problems)
      .toEqual([expect.stringMatching(/^contentPolicies\[0\]\.moderation\.alias: alias moderator has no route to a deployment with the `moderation` capability/)]);
    expect(new Log().plan(parseGatewayConfig(moderated(true, false))).problems).toEqual([expect.stringMatching(/^contentPolicies\[0\]\.moderation\.alias: alias moderator does not exist/)]);
  });

  test('--prune retires the moderation alias after the policy that moderates through it, and keeps it (drift) while a declared policy does', () => {
    const log = new Log();
    log.run(log.plan(parseGatewayConfig(moderated())).steps);
    const both = log.plan(parseGatewayConfig(moderated(false, false)), { prune: true });
    expect(both.steps.map((s) => s.summary)).toEqual(['retire content policy moderated (not declared)', 'retire alias moderator (not declared)']);
    const aliasOnly = log.plan(parseGatewayConfig(moderated(true, false)), { prune: true });
    expect(aliasOnly.steps.map((s) => s.summary)).not.toContain('retire alias moderator (not declared)');
    expect(messages(aliasOnly.drift)).toEqual([expect.stringContaining('alias moderator is not declared but stays published: content policy moderated moderates through it')]);
  });
});
