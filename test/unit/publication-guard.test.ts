import type { AliasEvent } from '../../events/alias-events.js';
import type { DomainEvent } from '../../events/event.js';
import type { DeploymentSettings } from '../../events/deployment-events.js';
import type { ProviderSettings } from '../../events/provider-events.js';
import { assertSafeCatalogChange } from '../../modules/catalog/publication-guard.js';
import { ControlPlaneState } from '../../projections/control-plane/control-plane-state.js';
import { DomainError } from '../../src/kernel/commands/decider.js';

process.env.GUARD_TEST_PROVIDER_KEY = 'provider-secret-for-guard-test';

const provider = (id: string, overrides: Partial<ProviderSettings> = {}): [string, DomainEvent] => [`provider-${id}`, {
  type: 'ProviderRegistered',
  data: { providerId: id, type: 'openai-compatible', baseUrl: 'https://llm.example.com/v1', credentialRef: 'env:GUARD_TEST_PROVIDER_KEY', apiVersion: null, region: null, allowPrivateNetwork: false, ...overrides },
}];
const deploymentSettings = (overrides: Partial<DeploymentSettings> = {}): DeploymentSettings => ({
  providerId: 'p1', model: 'm', region: null, capabilities: ['chat', 'streaming'], contextWindow: 8000, maxOutputTokens: 1000, quotaGroup: null,
  limits: { rpm: null, tpm: null, maxConcurrency: null }, ...overrides,
});
const deployment = (id: string, overrides: Partial<DeploymentSettings> = {}): [string, DomainEvent] =>
  [`deployment-${id}`, { type: 'DeploymentRegistered', data: { deploymentId: id, ...deploymentSettings(overrides) } }];
const price = (id: string): [string, DomainEvent] => [`price-${id}`, {
  type: 'PriceScheduled',
  data: { deploymentId: id, effectiveFrom: '2026-01-01T00:00:00.000Z', inputPer1M: '1', outputPer1M: '2', cachedInputPer1M: null, cacheWritePer1M: null, reasoningPer1M: null, currency: 'USD' },
}];
const published = (alias: string, version: number, deployments: string[], requiredCapabilities: string[] = []): AliasEvent => ({
  type: 'AliasPublished',
  data: {
    alias, version, strategy: 'priority', visibility: 'public',
    routes: deployments.map((deploymentId, priority) => ({ deploymentId, priority, weight: 1 })),
    policy: { requiredCapabilities, maxAttempts: null, ttftTimeoutMs: null, regions: [] },
  },
});

function stateOf(events: Array<[string, DomainEvent]>): ControlPlaneState {
  const versions = new Map<string, number>();
  return ControlPlaneState.empty().withAll(events.map(([streamId, event]) => {
    const streamVersion = (versions.get(streamId) ?? 0) + 1;
    versions.set(streamId, streamVersion);
    return { streamId, streamVersion, ...event };
  }));
}

/** Two priced deployments on one provider, alias `chat` routing to d1. */
const base = (): Array<[string, DomainEvent]> => [
  provider('p1'), deployment('d1'), price('d1'), deployment('d2'), price('d2'), ['alias-chat', published('chat', 1, ['d1'])],
];

function refusal(state: ControlPlaneState, streamId: string, events: DomainEvent[]): string {
  try {
    assertSafeCatalogChange(state, streamId, events);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).status).toBe(422);
    expect((error as DomainError).code).toBe('unsafe_publication');
    return (error as DomainError).message;
  }
  throw new Error('expected the change to be refused');
}

describe('safe publication', () => {
  test('a change that keeps every alias servable passes', () => {
    const state = stateOf(base());
    expect(() => assertSafeCatalogChange(state, 'alias-chat', [published('chat', 2, ['d1', 'd2'])])).not.toThrow();
    expect(() => assertSafeCatalogChange(state, 'alias-new', [published('new', 1, ['d2'])])).not.toThrow();
  });

  test('publishing a route to a missing deployment is refused', () => {
    expect(refusal(stateOf(base()), 'alias-chat', [published('chat', 2, ['d1', 'ghost'])])).toMatch(/ghost, which does not exist/);
  });

  test('publishing an alias onto a retired deployment is refused', () => {
    const state = stateOf([...base(), ['deployment-d2', { type: 'DeploymentRetired', data: { deploymentId: 'd2', reason: null } }]]);
    expect(refusal(state, 'alias-other', [published('other', 1, ['d2'])])).toMatch(/d2 is retired/);
  });

  test('publishing a new route to a disabled deployment is refused; a route that already had it may stay', () => {
    const disabled: [string, DomainEvent] = ['deployment-d2', { type: 'DeploymentDisabled', data: { deploymentId: 'd2', reason: 'incident' } }];
    expect(refusal(stateOf([...base(), disabled]), 'alias-chat', [published('chat', 2, ['d1', 'd2'])])).toMatch(/d2, which is disabled/);
    const withD2 = stateOf([...base(), ['alias-chat', published('chat', 2, ['d1', 'd2'])], disabled]);
    expect(() => assertSafeCatalogChange(withD2, 'alias-chat', [published('chat', 3, ['d2', 'd1'])])).not.toThrow();
  });

  test('a route lacking a capability the alias declares is refused', () => {
    const state = stateOf([...base(), deployment('d3', { capabilities: ['chat'] }), price('d3')]);
    expect(refusal(state, 'alias-tools', [published('tools', 1, ['d1', 'd3'], ['streaming'])])).toMatch(/d3 lacks streaming/);
  });

  test('removing a capability an alias relies on is refused', () => {
    const state = stateOf([...base(), ['alias-stream', published('stream', 1, ['d1'], ['streaming'])]]);
    const update = { type: 'DeploymentUpdated', data: { deploymentId: 'd1', ...deploymentSettings({ capabilities: ['chat'] }) } };
    expect(refusal(state, 'deployment-d1', [update])).toMatch(/lacks streaming/);
  });

  test('retiring a deployment that an alias routes to is refused', () => {
    expect(refusal(stateOf(base()), 'deployment-d1', [{ type: 'DeploymentRetired', data: { deploymentId: 'd1', reason: null } }])).toMatch(/d1 is retired/);
  });

  test('removing a provider that serves an alias is refused', () => {
    expect(refusal(stateOf(base()), 'provider-p1', [{ type: 'ProviderRemoved', data: { providerId: 'p1', reason: null } }])).toMatch(/provider p1 does not exist or was removed/);
  });

  test('a provider whose secret reference cannot be resolved is refused, even before a deployment uses it', () => {
    const [, event] = provider('p2', { credentialRef: 'env:GUARD_TEST_MISSING_VARIABLE' });
    expect(refusal(stateOf(base()), 'provider-p2', [event])).toMatch(/GUARD_TEST_MISSING_VARIABLE cannot be resolved/);
    const [, fileRef] = provider('p3', { credentialRef: 'file:/nonexistent/switchyard/secret' });
    expect(refusal(stateOf(base()), 'provider-p3', [fileRef])).toMatch(/cannot be resolved/);
  });

  test('an update that makes a serving provider unsafe (metadata address) is refused', () => {
    // Simulates an event that bypassed the decider (e.g. written by an older version): the build still catches it.
    const [, event] = provider('p1', { baseUrl: 'http://169.254.169.254/latest' });
    expect(refusal(stateOf(base()), 'provider-p1', [{ ...event, type: 'ProviderUpdated' }])).toMatch(/metadata/);
  });

  test('a price for a deployment that does not exist, or is retired, is refused', () => {
    const [, event] = price('nowhere');
    expect(refusal(stateOf(base()), 'price-nowhere', [event])).toMatch(/nowhere, which does not exist/);
    const state = stateOf([...base(), deployment('d9'), ['deployment-d9', { type: 'DeploymentRetired', data: { deploymentId: 'd9', reason: null } }]]);
    const [, late] = price('d9');
    expect(refusal(state, 'price-d9', [late])).toMatch(/d9, which is retired/);
  });

  test('a deployment without any price cannot be published onto', () => {
    const state = stateOf([...base(), deployment('free')]);
    expect(refusal(state, 'alias-free', [published('free', 1, ['free'])])).toMatch(/free has no price/);
  });

  test('problems that already existed do not block unrelated changes', () => {
    const state = stateOf([...base(), deployment('orphan', { providerId: 'gone' })]);
    expect(() => assertSafeCatalogChange(state, 'alias-more', [published('more', 1, ['d2'])])).not.toThrow();
  });
});
