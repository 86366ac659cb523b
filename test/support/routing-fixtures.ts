import type { ResolvedAlias, ResolvedDeployment } from '../../projections/routing-snapshot/routing-snapshot.js';
import type { RouteCandidate } from '../../modules/inference/routing/route-planner.js';

/** A resolved deployment for unit tests of routing and the attempt loop. */
export function testDeployment(id: string, overrides: Partial<ResolvedDeployment> = {}): ResolvedDeployment {
  return {
    id,
    provider: { id: 'p', type: 'openai-compatible', baseUrl: 'http://upstream.invalid', apiVersion: null, region: null, credential: null, allowPrivateNetwork: false },
    model: `model-${id}`,
    region: null,
    capabilities: new Set(['chat', 'streaming']),
    contextWindow: 8_000,
    maxOutputTokens: 1_000,
    quotaGroup: null,
    limits: { rpm: null, tpm: null, maxConcurrency: null },
    status: 'active',
    prices: [{ version: 1, effectiveFrom: new Date(0), table: { inputPer1M: '1', outputPer1M: '2', cachedInputPer1M: null, cacheWritePer1M: null, reasoningPer1M: null, currency: 'USD' } }],
    fingerprint: id,
    ...overrides,
  };
}

export function testAlias(deployments: ResolvedDeployment[], name = 'chat'): ResolvedAlias {
  return {
    name,
    version: 1,
    strategy: 'priority',
    policy: { requiredCapabilities: [], maxAttempts: null, ttftTimeoutMs: null, regions: [] },
    visibility: 'public',
    routes: deployments.map((deployment, index) => ({ deployment, priority: index, weight: 1 })),
  };
}

/** The plan's candidates for an alias, in route order. */
export function testCandidates(alias: ResolvedAlias): RouteCandidate[] {
  return alias.routes.map((route, index) => ({
    deployment: route.deployment, price: route.deployment.prices[0], priority: route.priority, weight: route.weight, route: `${alias.name}#${index + 1}`,
  }));
}
