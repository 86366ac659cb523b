import type { ContentPolicyDefinition } from '../../events/index.js';
import { contentPolicyProblems, normalizeContentPolicy } from '../../modules/content-safety/index.js';
import { combineContentPolicies } from '../../projections/routing-snapshot/index.js';

/** A policy's `webhook` (issue 36 item 6): defaults when applied, and how policies that each have one combine. */
describe('content policy webhooks', () => {
  const declared = (url: string, extra: Record<string, unknown> = {}) =>
    normalizeContentPolicy({ input: { email: 'mask' }, webhook: { url, ...extra } }) as ContentPolicyDefinition;

  test('defaults: 2000 ms, fail-closed, input only; directions kept in a stable order', () => {
    expect(declared('https://guard.example/check').webhook).toEqual({ url: 'https://guard.example/check', timeoutMs: 2000, failOpen: false, directions: ['input'] });
    expect(declared('https://guard.example/check', { directions: ['output', 'input'], failOpen: true, secret: 'env:GUARD_KEY' }).webhook)
      .toEqual({ url: 'https://guard.example/check', secret: 'env:GUARD_KEY', timeoutMs: 2000, failOpen: true, directions: ['input', 'output'] });
  });

  test('a webhook that is not a mapping, an empty direction list, a non-http URL and a URL with credentials are refused', () => {
    expect(contentPolicyProblems({ webhook: 'https://guard.example' }, 'p')).toEqual([expect.stringMatching(/^p\.webhook: must be a mapping/)]);
    expect(contentPolicyProblems({ webhook: { url: 'https://guard.example', directions: [] } }, 'p')).toEqual(['p.webhook.directions: must be a non-empty list of input, output']);
    expect(contentPolicyProblems({ webhook: { url: 'ftp://guard.example' } }, 'p')).toEqual(['p.webhook.url: must be an http(s) URL']);
    expect(contentPolicyProblems({ webhook: { url: 'https://user:pw@guard.example' } }, 'p')).toEqual([expect.stringMatching(/^p\.webhook\.url: must not embed credentials/)]);
    expect(contentPolicyProblems({ webhook: { url: 'https://guard.example', directions: ['input', 'input'] } }, 'p')).toEqual(['p.webhook.directions: a direction is listed twice']);
  });

  test('policies combine their rules, but every webhook is kept with its own policy; the same policy twice counts once', () => {
    const tenant = { policyId: 'tenant-rules', version: 2, attachedTo: 'tenant' as const, definition: declared('https://a.example/check') };
    const alias = { policyId: 'alias-rules', version: 1, attachedTo: 'alias' as const, definition: declared('https://b.example/check', { failOpen: true }) };
    const key = { policyId: 'tenant-rules', version: 2, attachedTo: 'key' as const, definition: tenant.definition };
    const effective = combineContentPolicies([tenant, key, alias])!;
    expect(effective.webhooks).toEqual([
      { policyId: 'tenant-rules', version: 2, webhook: tenant.definition.webhook },
      { policyId: 'alias-rules', version: 1, webhook: alias.definition.webhook },
    ]);
    expect(combineContentPolicies([tenant])!.webhooks).toEqual([{ policyId: 'tenant-rules', version: 2, webhook: tenant.definition.webhook }]);
    const plain = { policyId: 'plain', version: 1, attachedTo: 'tenant' as const, definition: normalizeContentPolicy({ input: { email: 'mask' } }) };
    expect(combineContentPolicies([plain])!.webhooks).toBeUndefined();
  });
});
