import type { AliasEvent } from '../../events/alias-events.js';
import type { AliasDefinition } from '../../events/alias-state.js';
import { aliasDecider } from '../../modules/catalog/alias/alias.decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(aliasDecider);
const alias = 'chat-fast';

const definition = (overrides: Partial<AliasDefinition> = {}): AliasDefinition => ({
  strategy: 'priority',
  routes: [
    { deploymentId: 'gpt-4o-mini', priority: 0, weight: 100 },
    { deploymentId: 'claude-haiku', priority: 1, weight: 1 },
  ],
  policy: { requiredCapabilities: ['chat', 'streaming'], maxAttempts: 3, ttftTimeoutMs: 5000, regions: [] },
  visibility: 'public',
  ...overrides,
});
const published = (version: number, d = definition()): AliasEvent => ({ type: 'AliasPublished', data: { alias, version, ...d } });
const retired: AliasEvent = { type: 'AliasRetired', data: { alias, reason: 'replaced' } };
const publish = (d = definition()) => ({ type: 'PublishAlias' as const, alias, definition: d });

describe('alias aggregate', () => {
  describe('PublishAlias', () => {
    test('the first publication is version 1 with strategy, routes, policy and visibility', () => {
      spec.given([]).when(publish()).then([published(1)]);
    });
    test('a changed definition is published as the next version', () => {
      const weighted = definition({ strategy: 'weighted', visibility: 'private' });
      spec.given([published(1)]).when(publish(weighted)).then([published(2, weighted)]);
    });
    test('publishing the current definition again changes nothing', () => {
      spec.given([published(1), published(2, definition({ strategy: 'least-cost' }))]).when(publish(definition({ strategy: 'least-cost' }))).thenNothing();
    });
    test('a concurrency limit is part of the policy; versions without one read as before', () => {
      const capped = definition({ policy: { ...definition().policy, limits: { rpm: 60, maxConcurrency: 3 } } });
      spec.given([published(1)]).when(publish(capped)).then([published(2, capped)]);
    });
    test('a retired alias can be published again, as a new version', () => {
      spec.given([published(1), retired]).when(publish()).then([published(2)]);
    });
    const invalid: Array<[string, string, Partial<AliasDefinition>]> = [
      ['no routes', alias, { routes: [] }],
      ['a duplicate route', alias, { routes: [{ deploymentId: 'a', priority: 0, weight: 1 }, { deploymentId: 'a', priority: 1, weight: 1 }] }],
      ['a negative priority', alias, { routes: [{ deploymentId: 'a', priority: -1, weight: 1 }] }],
      ['a negative weight', alias, { routes: [{ deploymentId: 'a', priority: 0, weight: -3 }] }],
      ['an unknown strategy', alias, { strategy: 'random' as 'priority' }],
      ['zero max attempts', alias, { policy: { requiredCapabilities: [], maxAttempts: 0, ttftTimeoutMs: null, regions: [] } }],
      ['an unknown visibility', alias, { visibility: 'internal' as 'public' }],
      ['a concurrency limit of zero', alias, { policy: { requiredCapabilities: [], maxAttempts: null, ttftTimeoutMs: null, regions: [], limits: { maxConcurrency: 0 } } }],
      ['a fractional rate limit', alias, { policy: { requiredCapabilities: [], maxAttempts: null, ttftTimeoutMs: null, regions: [], limits: { rpm: 1.5 } } }],
      ['a name with spaces', 'chat fast', {}],
    ];
    test.each(invalid)('refuses %s', (_name, name, overrides) => {
      spec.given([]).when({ type: 'PublishAlias', alias: name, definition: definition(overrides) }).thenThrows('invalid_alias', 422);
    });
  });

  describe('RetireAlias', () => {
    test('a published alias is retired', () => {
      spec.given([published(1)]).when({ type: 'RetireAlias', alias, reason: 'replaced' }).then([retired]);
    });
    test('an unknown alias cannot be retired', () => {
      spec.given([]).when({ type: 'RetireAlias', alias, reason: null }).thenThrows('alias_not_found', 404);
    });
    test('a retired alias cannot be retired again', () => {
      spec.given([published(1), retired]).when({ type: 'RetireAlias', alias, reason: null }).thenThrows('alias_already_retired', 409);
    });
  });
});
