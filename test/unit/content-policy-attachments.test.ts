import type { ContentPolicyDefinition } from '../../events/content-policy-events.js';
import type { DomainEvent } from '../../events/event.js';
import { assertContentPolicyChange } from '../../modules/access/content-policy/content-policy-guard.js';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { ControlPlaneState } from '../../projections/control-plane/control-plane-state.js';
import { ContentPolicyIndex } from '../../projections/routing-snapshot/content-policy-index.js';
import { type AttachedPolicy, combineContentPolicies } from '../../projections/routing-snapshot/effective-content-policy.js';
import { buildRoutingSnapshot } from '../../projections/routing-snapshot/build-routing-snapshot.js';
import { exportConfiguration } from '../../src/config/export/configuration-export.js';
import { ConfigValidationError, parseGatewayConfig } from '../../src/config/gateway-config.js';
import { DomainError } from '../../src/kernel/commands/decider.js';
import { PlanLog } from '../support/plan-log.js';

process.env.CONTENT_POLICY_UPSTREAM_KEY = 'content-policy-upstream-secret';
process.env.CONTENT_POLICY_GATEWAY_KEY = generateApiKey();
process.env.CONTENT_POLICY_PII_KEY = 'a-pii-key-of-at-least-thirty-two-bytes-0123456789';

const base: ContentPolicyDefinition = { input: {}, output: {}, tokenScope: 'request', unresolvedTokenPolicy: 'leave-masked', placeholderInstruction: false };
const policy = (overrides: Partial<ContentPolicyDefinition>): ContentPolicyDefinition => ({ ...base, ...overrides });
const attached = (policyId: string, attachedTo: AttachedPolicy['attachedTo'], definition: ContentPolicyDefinition, version = 1): AttachedPolicy =>
  ({ policyId, version, attachedTo, definition });

describe('content policies combined (tenant, key, alias)', () => {
  test('none attached: null', () => {
    expect(combineContentPolicies([])).toBeNull();
  });

  test('one policy is itself, with where it is attached', () => {
    const only = policy({ input: { email: 'mask' } });
    expect(combineContentPolicies([attached('p', 'key', only, 3)])).toEqual({ applied: { sources: [{ policyId: 'p', version: 3, attachedTo: 'key' }] }, definition: only });
  });

  test('per finding type and direction the strictest action wins: block > mask > tokenize > log > allow', () => {
    const effective = combineContentPolicies([
      attached('t', 'tenant', policy({ input: { email: 'log', phone: 'tokenize', card: 'allow' }, output: { secret: 'mask' } })),
      attached('k', 'key', policy({ input: { email: 'tokenize', phone: 'mask', iban: 'log' }, output: { secret: 'log', email: 'block' } })),
      attached('a', 'alias', policy({ input: { email: 'allow', card: 'block' } })),
    ])!;
    expect(effective.definition.input).toEqual({ email: 'tokenize', phone: 'mask', card: 'block', iban: 'log' });
    expect(effective.definition.output).toEqual({ secret: 'mask', email: 'block' });
    expect(effective.applied.sources.map((s) => `${s.attachedTo}:${s.policyId}@${s.version}`)).toEqual(['tenant:t@1', 'key:k@1', 'alias:a@1']);
  });

  test('custom patterns and deny terms are unions; deny terms take the strictest of their actions', () => {
    const effective = combineContentPolicies([
      attached('t', 'tenant', policy({ input: { custom: [{ name: 'code', pattern: 'PRJ-[0-9]{6}', action: 'log' }], deny_terms: { terms: ['nightingale'], action: 'log' } } })),
      attached('a', 'alias', policy({
        input: { custom: [{ name: 'code', pattern: 'PRJ-[0-9]{6}', action: 'mask' }, { name: 'ticket', pattern: 'T-[0-9]+', action: 'mask' }], deny_terms: { terms: ['falcon', 'nightingale'], action: 'block' } },
      })),
    ])!;
    expect(effective.definition.input.custom).toEqual([
      { name: 'code', pattern: 'PRJ-[0-9]{6}', action: 'mask' }, { name: 'ticket', pattern: 'T-[0-9]+', action: 'mask' },
    ]);
    expect(effective.definition.input.deny_terms).toEqual({ terms: ['nightingale', 'falcon'], action: 'block' });
  });

  test('tokenScope is session only when every tokenizing policy asks for it; a policy that does not tokenize has no say', () => {
    const session = policy({ input: { email: 'tokenize' }, tokenScope: 'session' });
    const request = policy({ input: { phone: 'tokenize' }, tokenScope: 'request' });
    const masksOnly = policy({ input: { card: 'mask' }, tokenScope: 'request' });
    expect(combineContentPolicies([attached('s', 'tenant', session), attached('r', 'key', request)])!.definition.tokenScope).toBe('request');
    expect(combineContentPolicies([attached('s', 'tenant', session), attached('m', 'alias', masksOnly)])!.definition.tokenScope).toBe('session');
    expect(combineContentPolicies([attached('s', 'tenant', session), attached('s2', 'key', session)])!.definition.tokenScope).toBe('session');
  });

  test('reject-buffered wins over leave-masked; the placeholder instruction is on when any asks', () => {
    const effective = combineContentPolicies([
      attached('a', 'tenant', policy({ unresolvedTokenPolicy: 'reject-buffered' })), attached('b', 'key', policy({ placeholderInstruction: true })),
    ])!;
    expect(effective.definition).toMatchObject({ unresolvedTokenPolicy: 'reject-buffered', placeholderInstruction: true });
  });

  test('the same policy attached at two levels counts once in the definition and twice in the sources', () => {
    const only = policy({ input: { email: 'mask' } });
    const effective = combineContentPolicies([attached('p', 'tenant', only), attached('p', 'alias', only)])!;
    expect(effective.definition).toBe(only);
    expect(effective.applied.sources).toHaveLength(2);
  });
});

/** The control plane with a tenant acme, its key k1, an alias chat, and the policies given. */
function controlPlane(...extra: Array<[string, DomainEvent[]]>): ControlPlaneState {
  let state = ControlPlaneState.empty()
    .with('tenant-acme', [{ type: 'TenantCreated', data: { tenantId: 'acme', name: 'acme' } }])
    .with('apikey-k1', [{
      type: 'ApiKeyIssued', data: { keyId: 'k1', tenantId: 'acme', hash: 'h', prefix: 'sk-sy-x', scopes: ['inference'], aliases: [], limits: { rpm: null, tpm: null, maxConcurrency: null }, expiresAt: null },
    }]);
  for (const [stream, events] of extra) state = state.with(stream, events);
  return state;
}
const defined = (policyId: string, definition: ContentPolicyDefinition, version = 1): [string, DomainEvent[]] =>
  [`content-policy-${policyId}`, [{ type: version === 1 ? 'ContentPolicyDefined' : 'ContentPolicyUpdated', data: { policyId, version, definition } }]];

describe('the routing snapshot answers the policy in force', () => {
  const strict = policy({ input: { email: 'mask' } });

  test('a stream named content-policy-… folds into the content policies, not elsewhere', () => {
    const state = controlPlane(defined('pii-strict', strict));
    expect(state.contentPolicies.get('pii-strict')).toMatchObject({ status: 'live', version: 1 });
    expect(state.versions.get('content-policy-pii-strict')).toBe(1);
  });

  test('no attachment: null, and the index is the shared empty one', () => {
    const state = controlPlane(defined('pii-strict', strict));
    expect(ContentPolicyIndex.of(state)).toBe(ContentPolicyIndex.EMPTY);
    const { snapshot } = buildRoutingSnapshot(state, 5, null, { providerProblem: () => null, resolveSecrets: false });
    expect(snapshot.contentPolicyFor('acme', 'k1', 'chat')).toBeNull();
  });

  test('tenant, key and alias attachments combine; memoised per (tenant, key, alias); other callers are unaffected', () => {
    const state = controlPlane(
      defined('tenant-policy', policy({ input: { email: 'log' } })),
      defined('key-policy', policy({ input: { email: 'mask' } }), 1),
      ['tenant-acme', [{ type: 'TenantContentPolicySet', data: { tenantId: 'acme', policyId: 'tenant-policy' } }]],
      ['apikey-k1', [{ type: 'ApiKeyUpdated', data: { keyId: 'k1', scopes: ['inference'], aliases: [], limits: { rpm: null, tpm: null, maxConcurrency: null }, expiresAt: null, contentPolicy: 'key-policy' } }]],
    );
    const index = ContentPolicyIndex.of(state);
    const first = index.contentPolicyFor('acme', 'k1', 'chat');
    expect(first?.definition.input).toEqual({ email: 'mask' });
    expect(first?.applied.sources).toEqual([{ policyId: 'tenant-policy', version: 1, attachedTo: 'tenant' }, { policyId: 'key-policy', version: 1, attachedTo: 'key' }]);
    expect(index.contentPolicyFor('acme', 'k1', 'chat')).toBe(first);
    expect(index.contentPolicyFor('acme', 'other-key', 'chat')?.applied.sources).toEqual([{ policyId: 'tenant-policy', version: 1, attachedTo: 'tenant' }]);
    expect(index.contentPolicyFor('globex', 'k9', 'chat')).toBeNull();
  });

  test('a new version reaches a new snapshot only: a request holding the old one keeps the version it was admitted with', () => {
    const v1 = controlPlane(defined('p', strict), ['tenant-acme', [{ type: 'TenantContentPolicySet', data: { tenantId: 'acme', policyId: 'p' } }]]);
    const before = buildRoutingSnapshot(v1, 1, null, { providerProblem: () => null, resolveSecrets: false }).snapshot;
    const v2 = v1.with('content-policy-p', [{ type: 'ContentPolicyUpdated', data: { policyId: 'p', version: 2, definition: policy({ input: { email: 'block' } }) } }]);
    const after = buildRoutingSnapshot(v2, 2, before, { providerProblem: () => null, resolveSecrets: false }).snapshot;
    expect(before.contentPolicyFor('acme', 'k1', 'chat')?.applied.sources[0].version).toBe(1);
    expect(before.contentPolicyFor('acme', 'k1', 'chat')?.definition.input).toEqual({ email: 'mask' });
    expect(after.contentPolicyFor('acme', 'k1', 'chat')?.applied.sources[0].version).toBe(2);
  });

  test('an attachment naming no policy is a snapshot problem and applies nothing', () => {
    const state = controlPlane(['tenant-acme', [{ type: 'TenantContentPolicySet', data: { tenantId: 'acme', policyId: 'ghost' } }]]);
    const build = buildRoutingSnapshot(state, 1, null, { providerProblem: () => null, resolveSecrets: false });
    expect(build.contentPolicyProblems).toEqual(['tenant acme: content policy ghost does not exist; nothing is applied for it']);
    expect(build.snapshot.contentPolicyFor('acme', 'k1', 'chat')).toBeNull();
  });
});

describe('the rules between policies and what they are attached to (publication guard)', () => {
  const refusal = (state: ControlPlaneState, events: DomainEvent[], env: Record<string, string> = {}): DomainError | null => {
    try {
      assertContentPolicyChange(state, events, env);
      return null;
    } catch (error) {
      if (error instanceof DomainError) return error;
      throw error;
    }
  };

  test('an alias a live policy moderates through is not retired: 409 naming the policy; once the policy is retired it may be', () => {
    const moderated = policy({ moderation: { alias: 'moderator', directions: ['input'], failOpen: false, timeoutMs: 5000 } });
    const retire: DomainEvent[] = [{ type: 'AliasRetired', data: { alias: 'moderator', reason: null } }];
    const inUse = refusal(controlPlane(defined('moderated', moderated)), retire);
    expect(inUse).toMatchObject({ status: 409, code: 'moderation_alias_in_use' });
    expect(inUse!.message).toContain('Alias moderator answers the moderation check of content policy moderated');
    const gone = controlPlane(defined('moderated', moderated), ['content-policy-moderated', [{ type: 'ContentPolicyRetired', data: { policyId: 'moderated', version: 1 } }]]);
    expect(refusal(gone, retire)).toBeNull();
    expect(refusal(controlPlane(defined('moderated', moderated)), [{ type: 'AliasRetired', data: { alias: 'chat', reason: null } }])).toBeNull();
  });

  test('attaching a policy that does not exist is 400 naming it; a retired one too', () => {
    const unknown = refusal(controlPlane(), [{ type: 'TenantContentPolicySet', data: { tenantId: 'acme', policyId: 'ghost' } }]);
    expect(unknown).toMatchObject({ status: 400, code: 'unknown_content_policy' });
    expect(unknown!.message).toContain('tenant acme: content policy ghost does not exist');
    const retired = controlPlane(defined('old', base), ['content-policy-old', [{ type: 'ContentPolicyRetired', data: { policyId: 'old', version: 1 } }]]);
    const onAlias = refusal(retired, [{
      type: 'AliasPublished',
      data: { alias: 'chat', version: 1, strategy: 'priority', routes: [], policy: { requiredCapabilities: [], maxAttempts: null, ttftTimeoutMs: null, regions: [], contentPolicy: 'old' }, visibility: 'public' },
    }]);
    expect(onAlias).toMatchObject({ status: 400 });
    expect(onAlias!.message).toContain('alias chat: content policy old is retired');
    const onKey = refusal(controlPlane(), [{
      type: 'ApiKeyUpdated', data: { keyId: 'k1', scopes: ['inference'], aliases: [], limits: { rpm: null, tpm: null, maxConcurrency: null }, expiresAt: null, contentPolicy: 'ghost' },
    }]);
    expect(onKey!.message).toContain('key k1');
  });

  test('detaching, and attaching a live policy, pass', () => {
    const state = controlPlane(defined('p', base));
    expect(refusal(state, [{ type: 'TenantContentPolicySet', data: { tenantId: 'acme', policyId: 'p' } }])).toBeNull();
    expect(refusal(state, [{ type: 'TenantContentPolicySet', data: { tenantId: 'acme', policyId: null } }])).toBeNull();
  });

  test('retiring a policy still attached is 409 naming every attachment; once detached it retires', () => {
    const state = controlPlane(
      defined('p', base),
      ['tenant-acme', [{ type: 'TenantContentPolicySet', data: { tenantId: 'acme', policyId: 'p' } }]],
      ['apikey-k1', [{ type: 'ApiKeyUpdated', data: { keyId: 'k1', scopes: ['inference'], aliases: [], limits: { rpm: null, tpm: null, maxConcurrency: null }, expiresAt: null, contentPolicy: 'p' } }]],
    );
    const retire: DomainEvent[] = [{ type: 'ContentPolicyRetired', data: { policyId: 'p', version: 1 } }];
    const error = refusal(state, retire);
    expect(error).toMatchObject({ status: 409, code: 'content_policy_attached' });
    expect(error!.message).toContain('tenant acme, key k1');
    const detached = state
      .with('tenant-acme', [{ type: 'TenantContentPolicySet', data: { tenantId: 'acme', policyId: null } }])
      .with('apikey-k1', [{ type: 'ApiKeyRevoked', data: { keyId: 'k1', reason: null } }]);
    expect(refusal(detached, retire)).toBeNull();
  });

  test('session tokenScope is refused without SWITCHYARD_PII_KEY, with one that does not resolve or is short, and accepted with one', () => {
    const session: DomainEvent[] = [{ type: 'ContentPolicyDefined', data: { policyId: 's', version: 1, definition: policy({ input: { email: 'tokenize' }, tokenScope: 'session' }) } }];
    const missing = refusal(ControlPlaneState.empty(), session);
    expect(missing).toMatchObject({ status: 422, code: 'content_policy_needs_pii_key' });
    expect(missing!.message).toContain('SWITCHYARD_PII_KEY');
    expect(refusal(ControlPlaneState.empty(), session, { SWITCHYARD_PII_KEY: 'the-key-itself' })!.message).toContain('secret reference');
    expect(refusal(ControlPlaneState.empty(), session, { SWITCHYARD_PII_KEY: 'env:CONTENT_POLICY_MISSING_KEY' })!.message).toContain('cannot be resolved');
    process.env.CONTENT_POLICY_SHORT_KEY = 'short';
    expect(refusal(ControlPlaneState.empty(), session, { SWITCHYARD_PII_KEY: 'env:CONTENT_POLICY_SHORT_KEY' })!.message).toContain('at least 32 bytes');
    expect(refusal(ControlPlaneState.empty(), session, { SWITCHYARD_PII_KEY: 'env:CONTENT_POLICY_PII_KEY' })).toBeNull();
    // Request scope needs no key.
    expect(refusal(ControlPlaneState.empty(), [{ type: 'ContentPolicyDefined', data: { policyId: 'r', version: 1, definition: policy({ input: { email: 'tokenize' } }) } }])).toBeNull();
  });
});

const yaml = (policies: string, attachments = { tenant: 'pii-strict', key: '', alias: '' }) => `
providers:
  - { id: up, type: openai-compatible, baseUrl: "https://llm.example.com/v1", apiKey: "env:CONTENT_POLICY_UPSTREAM_KEY" }
deployments:
  - { id: d1, provider: up, model: m1, price: { inputPer1M: "1", outputPer1M: "2" } }
aliases:
  - { name: chat, routes: [{ deployment: d1 }]${attachments.alias ? `, contentPolicy: ${attachments.alias}` : ''} }
${policies}
tenants:
  - { id: acme${attachments.tenant ? `, contentPolicy: ${attachments.tenant}` : ''} }
apiKeys:
  - { id: k1, tenant: acme, key: "env:CONTENT_POLICY_GATEWAY_KEY"${attachments.key ? `, contentPolicy: ${attachments.key}` : ''} }
`;
const PII_STRICT = `
contentPolicies:
  - id: pii-strict
    input:  { email: tokenize, phone: tokenize, card: block, iban: mask, national_id: mask, secret: block,
              ip_address: log, custom: [{ name: project-code, pattern: "PRJ-[0-9]{6}", action: mask }],
              deny_terms: { terms: ["project nightingale"], action: block },
              prompt_injection: log }
    output: { email: mask, secret: mask }
    tokenScope: request
    unresolvedTokenPolicy: leave-masked`;

describe('content policies in the configuration file', () => {
  test('the issue\'s YAML is read as declared, its defaults filled', () => {
    const config = parseGatewayConfig(yaml(PII_STRICT));
    expect(config.contentPolicies).toEqual([{
      id: 'pii-strict',
      definition: {
        input: {
          email: 'tokenize', phone: 'tokenize', card: 'block', iban: 'mask', national_id: 'mask', ip_address: 'log', secret: 'block', prompt_injection: 'log',
          custom: [{ name: 'project-code', pattern: 'PRJ-[0-9]{6}', action: 'mask' }], deny_terms: { terms: ['project nightingale'], action: 'block' },
        },
        output: { email: 'mask', secret: 'mask' },
        tokenScope: 'request', unresolvedTokenPolicy: 'leave-masked', placeholderInstruction: false,
      },
    }]);
    expect(config.tenants[0].contentPolicy).toBe('pii-strict');
  });

  test('a bad policy is refused with every problem at its path: a catastrophic pattern, an unknown action, tokenize on output, a duplicate id', () => {
    const bad = `
contentPolicies:
  - id: p
    input: { email: redact, custom: [{ name: c, pattern: "(a+)+$", action: mask }] }
    output: { email: tokenize }
  - { id: p }`;
    let error: unknown;
    try {
      parseGatewayConfig(yaml(bad, { tenant: '', key: '', alias: '' }));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigValidationError);
    const problems = (error as ConfigValidationError).problems.join('\n');
    expect(problems).toContain('contentPolicies[0].input.email: must be one of');
    expect(problems).toContain('contentPolicies[0].input.custom[0].pattern: nests a repetition inside a repetition');
    expect(problems).toContain('contentPolicies[0].output.email: must be one of');
    expect(problems).toContain("contentPolicies[1]: duplicate id 'p'");
  });

  test('apply plans the policy before what names it; again: nothing; a reference to an undeclared policy is a problem of the plan', () => {
    const log = new PlanLog();
    const plan = log.plan(parseGatewayConfig(yaml(PII_STRICT, { tenant: 'pii-strict', key: 'pii-strict', alias: 'pii-strict' })));
    expect(plan.problems).toEqual([]);
    const summaries = plan.steps.map((s) => s.summary);
    expect(summaries.indexOf('define content policy pii-strict')).toBeLessThan(summaries.indexOf('attach content policy pii-strict to tenant acme'));
    expect(summaries).toContain('publish alias chat');
    log.run(plan.steps);
    expect(log.state.aliases.get('chat')).toMatchObject({ definition: { policy: { contentPolicy: 'pii-strict' } } });
    expect(log.state.keys.get('k1')).toMatchObject({ grant: { contentPolicy: 'pii-strict' } });
    expect(log.plan(parseGatewayConfig(yaml(PII_STRICT, { tenant: 'pii-strict', key: 'pii-strict', alias: 'pii-strict' }))).steps).toEqual([]);

    const dangling = new PlanLog().plan(parseGatewayConfig(yaml('', { tenant: 'ghost', key: 'ghost', alias: '' })));
    expect(dangling.problems).toEqual([
      "tenants[0].contentPolicy: content policy 'ghost' is not declared (contentPolicies) nor live",
      "apiKeys[0].contentPolicy: content policy 'ghost' is not declared (contentPolicies) nor live",
    ]);
  });

  test('a changed policy is one update step with its changed fields; a policy changed through the API is drift, kept', () => {
    const log = new PlanLog();
    log.run(log.plan(parseGatewayConfig(yaml(PII_STRICT))).steps);
    const edited = parseGatewayConfig(yaml(PII_STRICT.replace('card: block', 'card: mask')));
    const plan = log.plan(edited);
    expect(plan.steps.map((s) => [s.summary, s.changes])).toEqual([['update content policy pii-strict', [{ field: 'input.card', from: 'block', to: 'mask' }]]]);

    const current = log.state.contentPolicies.get('pii-strict');
    if (current?.status !== 'live') throw new Error('not live');
    log.record('content-policy-pii-strict', [{
      type: 'ContentPolicyUpdated', data: { policyId: 'pii-strict', version: 2, definition: { ...current.definition, placeholderInstruction: true } },
    }], 'admin:ops');
    const drifted = log.plan(parseGatewayConfig(yaml(PII_STRICT)));
    expect(drifted.steps).toEqual([]);
    expect(drifted.drift.map((d) => d.message)).toEqual([expect.stringContaining('contentPolicies[0] content policy pii-strict: placeholderInstruction: file false, running true (set by admin:ops')]);
  });

  test('session scope without SWITCHYARD_PII_KEY is a problem of the plan, so a dry run says it', () => {
    const session = PII_STRICT.replace('tokenScope: request', 'tokenScope: session');
    const refused = new PlanLog().plan(parseGatewayConfig(yaml(session)), { env: {} });
    expect(refused.problems).toEqual([expect.stringMatching(/^contentPolicies\[0\]\.tokenScope: tokenScope session .* needs SWITCHYARD_PII_KEY/)]);
    expect(new PlanLog().plan(parseGatewayConfig(yaml(session)), { env: { SWITCHYARD_PII_KEY: 'env:CONTENT_POLICY_PII_KEY' } }).problems).toEqual([]);
  });

  test('--prune retires a policy nothing names any more, and keeps (as drift) one something still names', () => {
    const log = new PlanLog();
    const extra = `${PII_STRICT}
  - { id: spare, input: { email: mask } }`;
    log.run(log.plan(parseGatewayConfig(yaml(extra))).steps);
    const pruned = log.plan(parseGatewayConfig(yaml('', { tenant: '', key: '', alias: '' })), { prune: true });
    expect(pruned.steps.filter((s) => s.family === 'content-policy').map((s) => s.summary)).toEqual(['retire content policy pii-strict (not declared)', 'retire content policy spare (not declared)']);
    expect(pruned.steps.map((s) => s.summary)).toContain('detach the content policy of tenant acme');

    const kept = log.plan(parseGatewayConfig(yaml(PII_STRICT)), { prune: true });
    expect(kept.steps.map((s) => s.summary)).toEqual(['retire content policy spare (not declared)']);
  });

  test('config export writes policies and attachments in the file\'s shape, and the export applies with no change', () => {
    const log = new PlanLog();
    log.run(log.plan(parseGatewayConfig(yaml(PII_STRICT, { tenant: 'pii-strict', key: 'pii-strict', alias: 'pii-strict' }))).steps);
    const exported = exportConfiguration(log.state, new Date('2026-03-02T00:00:00Z'));
    expect(exported).toContain('contentPolicies:');
    const again = parseGatewayConfig(exported);
    expect(again.contentPolicies.map((p) => p.id)).toEqual(['pii-strict']);
    expect([again.tenants[0].contentPolicy, again.apiKeys[0].contentPolicy, again.aliases[0].policy.contentPolicy]).toEqual(['pii-strict', 'pii-strict', 'pii-strict']);
    expect(log.plan(again).steps).toEqual([]);
  });
});
