import type { ContentPolicyDefinition } from '../../events/index.js';
import { ProviderError } from '../../modules/canonical/index.js';
import { FindingCounts, RemoteCheckBlock, RemoteCheckFailure, RemoteCheckUnavailable, normalizeContentPolicy, runModerationChecks } from '../../modules/content-safety/index.js';
import { fromOpenAiModeration } from '../../modules/providers/openai/openai-moderation.js';
import { combineContentPolicies } from '../../projections/routing-snapshot/index.js';

/** A policy's `moderation` (issue 36 item 6): defaults when applied, combination, the verdict's categories, and reading OpenAI's answer. */
describe('content policy moderation checks', () => {
  const declared = (alias: string, extra: Record<string, unknown> = {}) =>
    normalizeContentPolicy({ moderation: { alias, ...extra } }) as ContentPolicyDefinition;
  const subject = { requestId: 'r1', tenantId: 'acme' };

  test('defaults: input only, fail-closed, 5000 ms, any category; directions and categories in a stable order', () => {
    expect(declared('moderator').moderation).toEqual({ alias: 'moderator', directions: ['input'], failOpen: false, timeoutMs: 5000 });
    expect(declared('moderator', { directions: ['output', 'input'], categories: ['violence', 'hate'], failOpen: true }).moderation)
      .toEqual({ alias: 'moderator', directions: ['input', 'output'], failOpen: true, categories: ['hate', 'violence'], timeoutMs: 5000 });
  });

  test('every policy keeps its own moderation check when policies combine; the same policy twice counts once', () => {
    const tenant = { policyId: 'tenant-rules', version: 2, attachedTo: 'tenant' as const, definition: declared('moderator') };
    const key = { policyId: 'tenant-rules', version: 2, attachedTo: 'key' as const, definition: tenant.definition };
    const alias = { policyId: 'alias-rules', version: 1, attachedTo: 'alias' as const, definition: declared('other-moderator', { failOpen: true }) };
    expect(combineContentPolicies([tenant, key, alias])!.moderations).toEqual([
      { policyId: 'tenant-rules', version: 2, moderation: tenant.definition.moderation },
      { policyId: 'alias-rules', version: 1, moderation: alias.definition.moderation },
    ]);
    expect(combineContentPolicies([{ ...tenant, definition: normalizeContentPolicy({ input: { email: 'mask' } }) }])!.moderations).toBeUndefined();
  });

  describe('runModerationChecks', () => {
    const check = (extra: Record<string, unknown> = {}) => ({ policyId: 'p', version: 1, moderation: declared('moderator', extra).moderation! });
    const flagged = (categories: string[]) => async () => ({ results: [{ flagged: false, categories: [] }, { flagged: true, categories }] });

    test('flagged in a listed category blocks (finding type moderation); in another category it passes', async () => {
      const counts = new FindingCounts();
      await expect(runModerationChecks([check({ categories: ['violence'] })], 'input', ['a', 'b'], subject, counts, flagged(['violence']))).rejects.toBeInstanceOf(RemoteCheckBlock);
      expect(counts.lines()).toEqual([{ type: 'moderation', direction: 'input', action: 'block', count: 1 }]);
      const passed = new FindingCounts();
      await runModerationChecks([check({ categories: ['violence'] })], 'input', ['a', 'b'], subject, passed, flagged(['hate']));
      expect(passed.lines()).toEqual([]);
    });

    test('no verdict: fail-closed refuses, fail-open passes counted as allow; a direction the check does not look at is not asked', async () => {
      const down = async () => {
        throw new RemoteCheckFailure('unavailable', 'down');
      };
      await expect(runModerationChecks([check()], 'input', ['a'], subject, new FindingCounts(), down)).rejects.toBeInstanceOf(RemoteCheckUnavailable);
      const counts = new FindingCounts();
      await runModerationChecks([check({ failOpen: true })], 'input', ['a'], subject, counts, down);
      expect(counts.lines()).toEqual([{ type: 'moderation', direction: 'input', action: 'allow', count: 1 }]);
      let asked = 0;
      await runModerationChecks([check()], 'output', ['a'], subject, new FindingCounts(), async () => {
        asked++;
        return { results: [] };
      });
      await runModerationChecks([check()], 'input', ['', ''], subject, new FindingCounts(), async () => {
        asked++;
        return { results: [] };
      });
      expect(asked).toBe(0);
    });
  });

  test("OpenAI's answer: one result per input with its flagged categories; anything else is a malformed answer", () => {
    expect(fromOpenAiModeration({ results: [{ flagged: true, categories: { violence: true, hate: false, 'self-harm/intent': true } }] }, 1))
      .toEqual({ providerRequestId: null, results: [{ flagged: true, categories: ['violence', 'self-harm/intent'] }] });
    expect(() => fromOpenAiModeration({ results: [] }, 1)).toThrow(ProviderError);
    expect(() => fromOpenAiModeration({ results: [{ categories: {} }] }, 1)).toThrow(/without `flagged`/);
    expect(() => fromOpenAiModeration('<html>', 1)).toThrow(ProviderError);
  });
});
