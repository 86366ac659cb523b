import type { AliasPolicy, RoutingStrategy } from '../../events/alias-events.js';
import { LatencyTracker } from '../../modules/inference/routing/latency-tracker.js';
import { type HealthView, type PlanInput, RoutePlanner } from '../../modules/inference/routing/route-planner.js';
import { stableBucket } from '../../modules/inference/routing/stable-hash.js';
import type { ResolvedAlias, ResolvedDeployment } from '../../projections/routing-snapshot/routing-snapshot.js';
import { seededRandom } from '../support/seeded-random.js';


function deployment(id: string, overrides: Partial<ResolvedDeployment> & { input?: string; output?: string } = {}): ResolvedDeployment {
  const { input = '1.00', output = '2.00', ...rest } = overrides;
  return {
    id,
    provider: { id: 'p', type: 'openai-compatible', baseUrl: 'http://upstream.invalid', apiVersion: null, region: null, credential: null, allowPrivateNetwork: false },
    model: `model-${id}`,
    region: 'eu',
    capabilities: new Set(['chat', 'streaming', 'tools']),
    contextWindow: 8_000,
    maxOutputTokens: 1_000,
    quotaGroup: null,
    limits: { rpm: null, tpm: null, maxConcurrency: null },
    status: 'active',
    prices: [{ version: 1, effectiveFrom: new Date(0), table: { inputPer1M: input, outputPer1M: output, cachedInputPer1M: null, cacheWritePer1M: null, reasoningPer1M: null, currency: 'USD' } }],
    fingerprint: id,
    ...rest,
  };
}

function alias(strategy: RoutingStrategy, routes: Array<[ResolvedDeployment, number, number]>, policy: Partial<AliasPolicy> = {}): ResolvedAlias {
  return {
    name: 'chat',
    version: 1,
    strategy,
    policy: { requiredCapabilities: [], maxAttempts: null, ttftTimeoutMs: null, regions: [], ...policy },
    visibility: 'public',
    routes: routes.map(([d, priority, weight]) => ({ deployment: d, priority, weight })),
  };
}

const input = (a: ResolvedAlias, overrides: Partial<PlanInput> = {}): PlanInput => ({
  alias: a, needs: ['chat'], estimatedInputTokens: 100, reservedOutputTokens: 100, at: new Date(), ...overrides,
});

/** Health that marks the listed deployments unavailable. */
const unhealthy = (reasons: Record<string, { reason: 'circuit_open' | 'trial_in_flight' | 'throttled' | 'saturated'; until: number | null }>): HealthView => ({
  unavailable: (d) => reasons[d.id] ?? null,
});

const firstPicks = (planner: RoutePlanner, i: PlanInput, n: number) => {
  const counts = new Map<string, number>();
  for (let k = 0; k < n; k++) {
    const first = planner.plan(i).candidates[0].deployment.id;
    counts.set(first, (counts.get(first) ?? 0) + 1);
  }
  return counts;
};

describe('eligibility, in order: region → capabilities → health → budget', () => {
  const a = deployment('a', { region: 'us' });
  const b = deployment('b', { region: 'eu', capabilities: new Set(['chat']) });
  const c = deployment('c', { region: 'eu' });

  test('the region is a hard filter: nothing inside the boundary empties the plan at the region stage, whatever else is wrong', () => {
    const planner = new RoutePlanner(new LatencyTracker(), unhealthy({ a: { reason: 'circuit_open', until: 5 } }));
    const plan = planner.plan(input(alias('priority', [[a, 0, 1]], { regions: ['eu'] })));
    expect(plan).toMatchObject({ candidates: [], emptiedBy: 'region' });
    expect(plan.skipped).toEqual([{ deploymentId: 'a', route: 'chat#1', stage: 'region', reason: 'outside_region', detail: [], until: null }]);
  });

  test('capabilities come before health: a request no healthy route could serve is a 400, not a 503', () => {
    const planner = new RoutePlanner(new LatencyTracker(), unhealthy({ c: { reason: 'circuit_open', until: 5 } }));
    const plan = planner.plan(input(alias('priority', [[b, 0, 1], [c, 1, 1]], { regions: ['eu'] }), { needs: ['chat', 'tools'] }));
    // b lacks tools (capabilities stage); c has them but is open (health stage): the health stage emptied it.
    expect(plan.emptiedBy).toBe('health');
    expect(plan.skipped.map((s) => [s.deploymentId, s.stage, s.reason, s.detail])).toEqual([['b', 'capabilities', 'lacks_capability', ['tools']], ['c', 'health', 'circuit_open', []]]);
    const onlyB = planner.plan(input(alias('priority', [[b, 0, 1]]), { needs: ['chat', 'tools'] }));
    expect(onlyB.emptiedBy).toBe('capabilities');
  });

  test('the context window must hold the estimated input plus the reserved output; unpriced routes are left out', () => {
    const small = deployment('small', { contextWindow: 500 });
    const unpriced = deployment('unpriced', { prices: [] });
    const plan = new RoutePlanner(new LatencyTracker()).plan(input(alias('priority', [[small, 0, 1], [unpriced, 0, 1], [c, 1, 1]]), { estimatedInputTokens: 450 }));
    expect(plan.candidates.map((x) => x.deployment.id)).toEqual(['c']);
    expect(plan.skipped.map((s) => s.reason)).toEqual(['context_window_too_small', 'no_price_in_effect']);
  });

  test('health skips disabled, open, throttled and saturated deployments and keeps when they recover', () => {
    const disabled = deployment('d', { status: 'disabled' });
    const planner = new RoutePlanner(new LatencyTracker(), unhealthy({ a: { reason: 'circuit_open', until: 1234 }, b: { reason: 'saturated', until: null } }));
    const plan = planner.plan(input(alias('priority', [[a, 0, 1], [b, 0, 1], [disabled, 0, 1], [c, 1, 1]])));
    expect(plan.candidates.map((x) => x.deployment.id)).toEqual(['c']);
    expect(plan.skipped.map((s) => [s.deploymentId, s.reason, s.until])).toEqual([['a', 'circuit_open', 1234], ['b', 'saturated', null], ['d', 'disabled', null]]);
    expect(plan.reason).toContain('skipped a (circuit_open)');
  });

  test('budget: routes whose price × estimated tokens exceeds what is left are skipped', () => {
    const cheap = deployment('cheap', { input: '1', output: '1' }); // 200 tokens → $0.0002
    const dear = deployment('dear', { input: '10', output: '10' }); // → $0.002
    const planner = new RoutePlanner(new LatencyTracker());
    const plan = planner.plan(input(alias('priority', [[dear, 0, 1], [cheap, 1, 1]]), { remainingBudgetUsd: '0.001' }));
    expect(plan.candidates.map((x) => x.deployment.id)).toEqual(['cheap']);
    expect(planner.plan(input(alias('priority', [[dear, 0, 1]]), { remainingBudgetUsd: '0.001' })).emptiedBy).toBe('budget');
  });
});

describe('strategies', () => {
  const a = deployment('a');
  const b = deployment('b');
  const c = deployment('c');

  test('priority: the lowest healthy group first, weighted within it, the other groups as fallbacks', () => {
    const planner = new RoutePlanner(new LatencyTracker(), unhealthy({ a: { reason: 'circuit_open', until: 1 } }), seededRandom(1));
    const plan = planner.plan(input(alias('priority', [[a, 0, 1], [b, 1, 1], [c, 2, 1]])));
    expect(plan.candidates.map((x) => x.deployment.id)).toEqual(['b', 'c']);
    expect(plan.reason).toMatch(/^priority: group 1, weighted: picked b/);
    const counts = firstPicks(new RoutePlanner(new LatencyTracker(), undefined, seededRandom(2)), input(alias('priority', [[a, 0, 3], [b, 0, 1], [c, 1, 100]])), 10_000);
    expect(counts.get('c')).toBeUndefined(); // a lower group is never skipped for weight
    expect(Math.abs(counts.get('a')! / 10_000 - 0.75)).toBeLessThan(0.03);
  });

  test('weighted: first picks converge to the weights (±3% over 10,000 picks), and a zero weight is only a standby', () => {
    const standby = deployment('standby');
    const planner = new RoutePlanner(new LatencyTracker(), undefined, seededRandom(7));
    const i = input(alias('weighted', [[a, 0, 70], [b, 5, 20], [c, 9, 10], [standby, 0, 0]]));
    const counts = firstPicks(planner, i, 10_000);
    expect(Math.abs(counts.get('a')! / 10_000 - 0.7)).toBeLessThan(0.03);
    expect(Math.abs(counts.get('b')! / 10_000 - 0.2)).toBeLessThan(0.03);
    expect(Math.abs(counts.get('c')! / 10_000 - 0.1)).toBeLessThan(0.03);
    expect(counts.get('standby')).toBeUndefined();
    expect(planner.plan(i).candidates.at(-1)!.deployment.id).toBe('standby');
  });

  test('least-latency: lowest EWMA first (TTFT for streams), unmeasured routes first so each gets measured', () => {
    const latency = new LatencyTracker();
    latency.observe('a', 900);
    latency.observe('b', 300);
    latency.observeTtft('a', 50);
    latency.observeTtft('b', 400);
    const planner = new RoutePlanner(latency, undefined, seededRandom(3));
    const routes = alias('least-latency', [[a, 0, 1], [b, 0, 1], [c, 0, 1]]);
    expect(planner.plan(input(routes)).candidates.map((x) => x.deployment.id)).toEqual(['c', 'b', 'a']);
    latency.observe('c', 2_000);
    latency.observeTtft('c', 2_000);
    expect(planner.plan(input(routes, { stream: true })).candidates.map((x) => x.deployment.id)).toEqual(['a', 'b', 'c']);
    // The average moves with new samples: b gets slow, a gets fast.
    for (let k = 0; k < 20; k++) {
      latency.observe('b', 5_000);
      latency.observe('a', 100);
    }
    const plan = planner.plan(input(routes));
    expect(plan.candidates.map((x) => x.deployment.id)).toEqual(['a', 'c', 'b']);
    expect(plan.reason).toMatch(/^least-latency \(latency EWMA/);
  });

  test('least-cost: cheapest price × estimated tokens first', () => {
    const dear = deployment('dear', { input: '5', output: '15' });
    const cheapInput = deployment('cheap-in', { input: '0.1', output: '10' });
    const cheapOutput = deployment('cheap-out', { input: '3', output: '0.5' });
    const planner = new RoutePlanner(new LatencyTracker(), undefined, seededRandom(4));
    const routes = alias('least-cost', [[dear, 0, 1], [cheapInput, 0, 1], [cheapOutput, 0, 1]]);
    // Long prompt, short answer: input price dominates.
    expect(planner.plan(input(routes, { estimatedInputTokens: 5_000, reservedOutputTokens: 10 })).candidates.map((x) => x.deployment.id)).toEqual(['cheap-in', 'cheap-out', 'dear']);
    // Short prompt, long answer: output price dominates.
    expect(planner.plan(input(routes, { estimatedInputTokens: 10, reservedOutputTokens: 900 })).candidates.map((x) => x.deployment.id)).toEqual(['cheap-out', 'cheap-in', 'dear']);
  });

  test('sticky: a session stays on its route; sessions spread by weight; only the sessions of a failed route move', () => {
    const planner = new RoutePlanner(new LatencyTracker(), undefined, seededRandom(5));
    const routes = alias('sticky', [[a, 0, 1], [b, 0, 1], [c, 0, 2]]);
    const choice = (session: string, principal = 'acme/app', r = routes, p = planner) =>
      p.plan(input(r, { affinity: { principal, sessionId: session, requestId: `${Math.random()}` } })).candidates[0].deployment.id;
    const before = new Map<string, string>();
    let moved = 0;
    for (let s = 0; s < 2_000; s++) {
      const first = choice(`session-${s}`);
      if (choice(`session-${s}`) !== first) moved++; // stays put, request after request
      before.set(`session-${s}`, first);
    }
    expect(moved).toBe(0);
    const share = (id: string) => [...before.values()].filter((v) => v === id).length / before.size;
    expect(Math.abs(share('c') - 0.5)).toBeLessThan(0.04);
    // Scoped to the principal: another caller's identical session id lands independently.
    const differs = [...before.keys()].filter((s) => choice(s, 'other/key') !== before.get(s)).length;
    expect(differs).toBeGreaterThan(500);
    // b goes down: its sessions move, every other session stays where it was.
    const withoutB = new RoutePlanner(new LatencyTracker(), unhealthy({ b: { reason: 'circuit_open', until: 1 } }), seededRandom(6));
    let wrong = 0;
    for (const [session, was] of before) {
      const now = choice(session, 'acme/app', routes, withoutB);
      if (was === 'b' ? now === 'b' : now !== was) wrong++;
    }
    expect(wrong).toBe(0);
    expect(planner.plan(input(routes, { affinity: { principal: 'acme/app', sessionId: 's', requestId: 'r' } })).reason).toMatch(/session hash/);
    expect(planner.plan(input(routes, { affinity: { principal: 'acme/app', sessionId: null, requestId: 'r' } })).reason).toMatch(/no x-session-id/);
  });

  test('canary: its share matches the percentage, assignment is stable per session, and the bucket is auditable', () => {
    const canary = deployment('canary');
    const routes = alias('priority', [[a, 0, 1], [canary, 0, 1]], { canary: { deploymentId: 'canary', percent: 5, salt: 'v2' } });
    const planner = new RoutePlanner(new LatencyTracker(), undefined, seededRandom(8));
    let first = 0;
    const problems: string[] = [];
    for (let s = 0; s < 10_000; s++) {
      const affinity = { principal: 'acme/app', sessionId: `s-${s}`, requestId: `r-${s}` };
      const plan = planner.plan(input(routes, { affinity }));
      const chosen = plan.candidates[0].deployment.id === 'canary';
      if (chosen) first++;
      // Everyone else reaches the canary only as the last fallback.
      else if (plan.candidates.at(-1)!.deployment.id !== 'canary') problems.push(`s-${s}: canary not last`);
      // Stable: the same session always gets the same answer, and anyone can recompute the bucket.
      if ((planner.plan(input(routes, { affinity: { ...affinity, requestId: 'other' } })).candidates[0].deployment.id === 'canary') !== chosen) problems.push(`s-${s}: unstable`);
      const bucket = stableBucket(['canary', 'chat', 'v2', 'session', 'acme/app', `s-${s}`], 10_000);
      if (bucket < 500 !== chosen) problems.push(`s-${s}: bucket ${bucket} disagrees`);
      if (!plan.reason.includes(`session bucket ${bucket}/10000`)) problems.push(`s-${s}: bucket not recorded`);
    }
    expect(problems).toEqual([]);
    expect(Math.abs(first / 10_000 - 0.05)).toBeLessThan(0.01);
    // Without a session the share holds per request.
    let perRequest = 0;
    for (let r = 0; r < 10_000; r++) {
      if (planner.plan(input(routes, { affinity: { principal: 'acme/app', sessionId: null, requestId: `req-${r}` } })).candidates[0].deployment.id === 'canary') perRequest++;
    }
    expect(Math.abs(perRequest / 10_000 - 0.05)).toBeLessThan(0.01);
  });

  test('a canary that is not eligible changes nothing but is noted', () => {
    const canary = deployment('canary', { status: 'disabled' });
    const planner = new RoutePlanner(new LatencyTracker(), undefined, seededRandom(9));
    const plan = planner.plan(input(alias('priority', [[a, 0, 1], [canary, 0, 1]], { canary: { deploymentId: 'canary', percent: 100, salt: '' } })));
    expect(plan.candidates.map((x) => x.deployment.id)).toEqual(['a']);
    expect(plan.reason).toContain('canary canary not eligible');
  });
});
