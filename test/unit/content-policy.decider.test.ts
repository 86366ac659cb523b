import type { ContentPolicyDefinition, ContentPolicyEvent } from '../../events/content-policy-events.js';
import { contentPolicyDecider } from '../../modules/access/content-policy/content-policy.decider.js';
import { tenantDecider } from '../../modules/access/tenant/tenant.decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(contentPolicyDecider);
const policyId = 'pii-strict';

const definition = (overrides: Partial<ContentPolicyDefinition> = {}): ContentPolicyDefinition => ({
  input: { email: 'tokenize', card: 'block', custom: [{ name: 'project-code', pattern: 'PRJ-[0-9]{6}', action: 'mask' }] },
  output: { email: 'mask' },
  tokenScope: 'request',
  unresolvedTokenPolicy: 'leave-masked',
  placeholderInstruction: false,
  ...overrides,
});
const defined = (version: number, d = definition()): ContentPolicyEvent => ({ type: 'ContentPolicyDefined', data: { policyId, version, definition: d } });
const updated = (version: number, d: ContentPolicyDefinition): ContentPolicyEvent => ({ type: 'ContentPolicyUpdated', data: { policyId, version, definition: d } });
const retired = (version: number): ContentPolicyEvent => ({ type: 'ContentPolicyRetired', data: { policyId, version } });
const define = (d = definition(), id = policyId) => ({ type: 'DefineContentPolicy' as const, policyId: id, definition: d });

describe('content policy aggregate', () => {
  describe('DefineContentPolicy', () => {
    test('refuses an id that is not a definition id', () => {
      spec.given([]).when(define(definition(), 'pii strict')).thenThrows('invalid_content_policy', 422);
    });
    test('refuses a definition content safety rejects, naming the problem (a catastrophic custom pattern)', () => {
      const error = spec.given([]).when(define(definition({ input: { custom: [{ name: 'bad', pattern: '(a+)+$', action: 'mask' }] } }))).thenThrows('invalid_content_policy', 422);
      expect(error.message).toContain('definition.input.custom[0].pattern');
    });
    test('refuses tokenize on the output (an answer cannot be tokenized)', () => {
      spec.given([]).when(define(definition({ output: { email: 'tokenize' } }))).thenThrows('invalid_content_policy', 422);
    });
    test('the first definition is version 1', () => {
      spec.given([]).when(define()).then([defined(1)]);
    });
    test('the same definition again changes nothing', () => {
      spec.given([defined(1)]).when(define()).thenNothing();
    });
    test('a changed definition is the next version, as an update', () => {
      const stricter = definition({ output: { email: 'mask', secret: 'block' } });
      spec.given([defined(1)]).when(define(stricter)).then([updated(2, stricter)]);
      spec.given([defined(1), updated(2, stricter)]).when(define()).then([updated(3, definition())]);
    });
    test('a retired policy defined again starts a new version, never reusing a number', () => {
      spec.given([defined(1), retired(1)]).when(define()).then([defined(2)]);
    });
  });

  describe('RetireContentPolicy', () => {
    test('refuses a policy that does not exist (404)', () => {
      spec.given([]).when({ type: 'RetireContentPolicy', policyId }).thenThrows('content_policy_not_found', 404);
    });
    test('refuses a policy already retired (409)', () => {
      spec.given([defined(1), retired(1)]).when({ type: 'RetireContentPolicy', policyId }).thenThrows('content_policy_already_retired', 409);
    });
    test('retires the current version', () => {
      const changed = definition({ tokenScope: 'session' });
      spec.given([defined(1), updated(2, changed)]).when({ type: 'RetireContentPolicy', policyId }).then([retired(2)]);
    });
  });
});

describe('tenant aggregate: its content policy', () => {
  const tenant = deciderSpec(tenantDecider);
  const created = { type: 'TenantCreated' as const, data: { tenantId: 'acme', name: 'acme' } };
  test('refuses a tenant that does not exist', () => {
    tenant.given([]).when({ type: 'SetTenantContentPolicy', tenantId: 'acme', policyId }).thenThrows('tenant_not_found', 404);
  });
  test('attaches, keeps (no event when unchanged) and detaches', () => {
    const attached = { type: 'TenantContentPolicySet' as const, data: { tenantId: 'acme', policyId } };
    tenant.given([created]).when({ type: 'SetTenantContentPolicy', tenantId: 'acme', policyId }).then([attached]);
    tenant.given([created, attached]).when({ type: 'SetTenantContentPolicy', tenantId: 'acme', policyId }).thenNothing();
    tenant.given([created, attached]).when({ type: 'SetTenantContentPolicy', tenantId: 'acme', policyId: null })
      .then([{ type: 'TenantContentPolicySet', data: { tenantId: 'acme', policyId: null } }]);
    tenant.given([created]).when({ type: 'SetTenantContentPolicy', tenantId: 'acme', policyId: null }).thenNothing();
  });
  test('a creation with a content policy attaches it in the same append', () => {
    tenant.given([]).when({ type: 'CreateTenant', tenantId: 'acme', name: 'acme', contentPolicy: policyId })
      .then([created, { type: 'TenantContentPolicySet', data: { tenantId: 'acme', policyId } }]);
  });
});
