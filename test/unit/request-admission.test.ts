import { Decimal } from 'decimal.js';
import { GatewayError } from '../../modules/canonical/gateway-error.js';
import type { InferenceServices, PipelineSettings } from '../../modules/inference/pipeline/inference-services.js';
import { admitRequest, type CacheLookup, type RequestIntent } from '../../modules/inference/pipeline/request-admission.js';
import { DEFAULT_RESILIENCE } from '../../modules/inference/resilience/resilience-settings.js';
import { LatencyTracker } from '../../modules/inference/routing/latency-tracker.js';
import { type HealthView, RoutePlanner } from '../../modules/inference/routing/route-planner.js';
import { AdmissionControl } from '../../modules/limits/admission-control.js';
import { DEFAULT_ADMISSION } from '../../modules/limits/admission-settings.js';
import type { BudgetReservation, BudgetScope, ConcurrencyScope, Permit, RateReservation, RateScope } from '../../modules/limits/index.js';
import type { ResolvedAlias } from '../../projections/routing-snapshot/routing-snapshot.js';
import { FakeResponse, StubCommitter, testPrincipal } from '../support/pipeline-fakes.js';
import { testAlias, testDeployment } from '../support/routing-fixtures.js';

const INTENT: RequestIntent = {
  operation: 'chat', clientFormat: 'openai', model: 'chat', stream: false, needs: ['chat'],
  estimatedInputTokens: 100, contextInputTokens: 100, reservedOutputTokens: 300, sessionId: null,
};

/**
 * Admission over a real node admission control and a real route planner; the rate limiter, the budget
 * guard and the cross-node concurrency are recorders, so what is checked is the order admission asks them
 * in and that every reservation it made is given back on every path that does not admit.
 */
function setup(options: {
  aliases?: ResolvedAlias[];
  health?: HealthView;
  rateRefusal?: GatewayError;
  budgetRefusal?: (scopes: readonly BudgetScope[], amount: Decimal | number) => GatewayError | null;
  profile?: 'default' | 'strict';
  principal?: ReturnType<typeof testPrincipal>;
} = {}) {
  const steps: string[] = [];
  const aliases = options.aliases ?? [testAlias([testDeployment('d1'), testDeployment('d2')])];
  const admission = new AdmissionControl(DEFAULT_ADMISSION);
  const committer = new StubCommitter();
  const rate = { reserved: [] as Array<{ scopes: readonly RateScope[]; usage: object }>, cancelled: 0, settled: [] as object[] };
  const budget = { reserved: [] as Array<{ amount: string; enforce: boolean }>, cancelled: 0, settled: [] as string[] };
  const shared = { acquired: [] as ConcurrencyScope[][], released: 0 };
  const planner = new RoutePlanner(new LatencyTracker(), options.health, () => 0);
  const services = {
    routing: { current: { version: 7, aliases: new Map(aliases.map((a) => [a.name, a])) } },
    planner: { plan: (input: Parameters<RoutePlanner['plan']>[0]) => (steps.push(`plan ${input.alias.name} out=${input.reservedOutputTokens}`), planner.plan(input)) },
    committer: committer.asCommitter,
    admission: {
      admit: (...args: Parameters<AdmissionControl['admit']>) => (steps.push('admit'), admission.admit(...args)),
      admitAlias: (alias: string, limit: number | null) => (steps.push(`admit alias ${alias}`), admission.admitAlias(alias, limit)),
    },
    concurrency: {
      acquire: async (scopes: readonly ConcurrencyScope[]): Promise<Permit> => {
        steps.push('shared concurrency');
        shared.acquired.push([...scopes]);
        let held = true;
        return { release: () => { if (held) shared.released++; held = false; } };
      },
    },
    rateLimits: {
      reserve: async (scopes: readonly RateScope[], usage: object): Promise<RateReservation> => {
        steps.push('rate');
        if (options.rateRefusal) throw options.rateRefusal;
        rate.reserved.push({ scopes, usage });
        return { headers: { 'x-ratelimit-limit-requests': '60' }, settle: (actual) => rate.settled.push(actual), cancel: () => rate.cancelled++ };
      },
    },
    budgets: {
      reserve: async (scopes: readonly BudgetScope[], amount: Decimal | number, opts: { enforce?: boolean }): Promise<BudgetReservation> => {
        steps.push(`budget ${String(amount)}`);
        const refusal = opts.enforce === false ? null : options.budgetRefusal?.(scopes, amount);
        if (refusal) throw refusal;
        budget.reserved.push({ amount: String(amount), enforce: opts.enforce !== false });
        return { settle: (actual) => budget.settled.push(actual), cancel: () => budget.cancelled++ };
      },
    },
  } as unknown as InferenceServices;
  const settings: PipelineSettings = { durability: options.profile ?? 'default', nodeId: 'node-1', resilience: DEFAULT_RESILIENCE };
  const raw = new FakeResponse();
  const admit = (intent: Partial<RequestIntent> = {}, lookup?: CacheLookup) =>
    admitRequest(services, settings, { requestId: 'req-1', headers: {}, body: {}, raw: raw.asRaw }, options.principal ?? testPrincipal(), { ...INTENT, ...intent }, lookup!);
  return { admit, steps, admission, committer, rate, budget, shared, raw };
}

const refusal = (status: number, code: string, scope?: string) => new GatewayError(status, code, `refused (${code})`, null, {}, scope ? { scope } : null);

describe('admitRequest', () => {
  test('admits in order (alias, node permits, shared concurrency, rate, plan, budget) and records what the planner reserved', async () => {
    const { admit, steps, committer, rate, raw } = setup({ profile: 'strict' });
    const request = await admit();
    expect(steps).toEqual(['admit', 'shared concurrency', 'rate', 'plan chat out=300', 'budget 0']);
    expect(request.answeredBy).toBe('providers');
    if (request.answeredBy !== 'providers') throw new Error('unreachable');
    expect(request.plan.candidates.map((c) => c.deployment.id)).toEqual(['d1', 'd2']);
    // The rate reservation, the plan and the admitted event all hold the same output reservation.
    expect(rate.reserved[0].usage).toEqual({ requests: 1, inputTokens: 100, outputTokens: 300 });
    expect(committer.types).toEqual([['RequestAdmitted']]);
    const admitted = committer.appends[0].events[0].data as { reservedOutputTokens: number; estimatedInputTokens: number; snapshotPosition: number };
    expect(admitted).toMatchObject({ reservedOutputTokens: 300, estimatedInputTokens: 100, snapshotPosition: 7 });
    // Rate-limit headers are on the response before anything is answered.
    expect(raw.preset).toEqual({ 'x-ratelimit-limit-requests': '60' });
    request.release();
  });

  test('default durability writes nothing at admission: RequestAdmitted travels with the terminal events', async () => {
    const { admit, committer } = setup();
    const request = await admit();
    expect(committer.appends).toEqual([]);
    expect(request.journal.isAdmitted).toBe(true);
    request.release();
  });

  test('release gives back every permit and settles each reservation once, however often it is called', async () => {
    const { admit, admission, rate, budget, shared } = setup({ principal: { ...testPrincipal(), tenant: { ...testPrincipal().tenant, budget: { monthlyUsd: '10', softPct: 80, enforcement: 'hard' } } } });
    const request = await admit();
    expect(admission.load().requests).toBe(1);
    request.release();
    request.release();
    expect(admission.load()).toMatchObject({ requests: 0, keys: 0, tenants: 0 });
    expect(shared.released).toBe(1);
    // Nothing was produced: the reservations settle at zero.
    expect(rate.settled).toEqual([{ requests: 1, inputTokens: 0, outputTokens: 0 }]);
    expect(budget.settled.map((usd) => new Decimal(usd).isZero())).toEqual([true]);
    expect(budget.reserved[0].amount).not.toBe('0');
  });

  test('an alias the key may not call is a 404 that reserves nothing and records nothing', async () => {
    const { admit, steps, committer, admission } = setup({ principal: testPrincipal(['other']) });
    await expect(admit()).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
    expect(steps).toEqual([]);
    expect(committer.appends).toEqual([]);
    expect(admission.load().requests).toBe(0);
  });

  test('a rate-limit refusal releases the permits taken before it and is recorded as RequestRejected with its scope', async () => {
    const { admit, admission, shared, committer } = setup({ rateRefusal: refusal(429, 'rate_limit_exceeded', 'tenant') });
    await expect(admit()).rejects.toMatchObject({ status: 429 });
    expect(admission.load()).toMatchObject({ requests: 0, keys: 0, tenants: 0 });
    expect(shared.released).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(committer.types).toEqual([['RequestRejected']]);
    expect(committer.appends[0].events[0].data).toMatchObject({ status: 429, code: 'rate_limit_exceeded', scope: 'tenant', alias: 'chat' });
  });

  test('no available route: a 503 naming routes as alias#n, never deployments or providers; the rate reservation is given back', async () => {
    const health: HealthView = { unavailable: () => ({ reason: 'circuit_open', until: null }) };
    const { admit, rate, admission, committer } = setup({ health });
    const error = (await admit().then(() => null, (e: unknown) => e)) as GatewayError;
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.status).toBe(503);
    const text = JSON.stringify({ message: error.message, detail: error.detail ?? null });
    expect(text).toContain('chat#1');
    expect(text).not.toMatch(/\bd1\b|\bd2\b|model-d1|upstream\.invalid|openai-compatible/);
    expect(rate.cancelled).toBe(1);
    expect(admission.load().requests).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(committer.types).toEqual([['RequestRejected']]);
  });

  test('a request that fits no context window is the client\'s 400: released, and not recorded', async () => {
    const { admit, rate, committer, admission } = setup();
    await expect(admit({ contextInputTokens: 7_900, reservedOutputTokens: 300 })).rejects.toMatchObject({ status: 400, code: 'context_length_exceeded' });
    expect(rate.cancelled).toBe(1);
    expect(admission.load().requests).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(committer.appends).toEqual([]);
  });

  test('a budget refusal on an alias with a downgrade target is served by the target, its cost still counted', async () => {
    const cheap = testAlias([testDeployment('cheap')], 'chat-lite');
    const main: ResolvedAlias = { ...testAlias([testDeployment('big')]), policy: { ...testAlias([]).policy, budgetDowngrade: 'chat-lite' } };
    const principal = { ...testPrincipal(), tenant: { ...testPrincipal().tenant, budget: { monthlyUsd: '1', softPct: 80, enforcement: 'hard' as const } } };
    const { admit, steps, budget, raw, committer } = setup({
      aliases: [main, cheap], principal, profile: 'strict',
      budgetRefusal: () => refusal(402, 'budget_exceeded', 'tenant'),
    });
    const request = await admit();
    expect(request.alias.name).toBe('chat-lite');
    expect(raw.preset['x-switchyard-budget-downgrade']).toBe('chat->chat-lite');
    expect(steps.filter((s) => s.startsWith('plan'))).toEqual(['plan chat out=300', 'plan chat-lite out=300']);
    expect(budget.reserved).toEqual([{ amount: expect.any(String), enforce: false }]);
    expect((committer.appends[0].events[0].data as { alias: string }).alias).toBe('chat-lite');
    request.release();
  });

  test('a cache hit plans no route and reserves no budget amount, but still holds the permits until released', async () => {
    const { admit, steps, admission } = setup();
    const lookup: CacheLookup = async () => ({ status: 'hit' } as never);
    const request = await admit({}, lookup);
    expect(request.answeredBy).toBe('cache');
    expect(steps).toEqual(['admit', 'shared concurrency', 'rate', 'budget 0']);
    expect(admission.load().requests).toBe(1);
    request.release();
    expect(admission.load().requests).toBe(0);
  });

  test("an alias's own concurrency limit applies to the alias that serves the request", async () => {
    const limited: ResolvedAlias = { ...testAlias([testDeployment('d1')]), policy: { ...testAlias([]).policy, limits: { maxConcurrency: 1 } } };
    const { admit, admission } = setup({ aliases: [limited] });
    const first = await admit();
    await expect(admit()).rejects.toMatchObject({ status: 429 });
    expect(admission.load().requests).toBe(1);
    first.release();
    const again = await admit();
    again.release();
    expect(admission.load()).toMatchObject({ requests: 0, aliases: 0 });
  });
});
