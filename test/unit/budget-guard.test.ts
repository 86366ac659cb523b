import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { BudgetGuard, type BudgetScope, type ThresholdCrossing } from '../../modules/limits/budget/budget-guard.js';
import type { CostBasis } from '../../modules/limits/budget/budget-refusal.js';
import { periodEndOf, periodId } from '../../modules/limits/budget/budget-period.js';
import { SpendSeeds } from '../../modules/limits/budget/spend-seeds.js';
import { LimitsRedis } from '../../modules/limits/limits-redis.js';
import { parseGatewayConfig, ConfigValidationError } from '../../src/config/gateway-config.js';

/** Reservations here outlive the test: how long one is held only matters to a shared store. */
const HOLD = { holdMs: 60_000 };

const NOW = Date.UTC(2026, 11, 31, 23, 0, 0);

/** The ledger's spend as the seeds read it: a fixed amount per scope, counting how often it is asked. */
class FixedSpend extends SpendSeeds {
  reads = 0;
  constructor(private readonly spentUsd: Record<string, string>) {
    super({ query: async () => [] });
  }

  override async spentNano(kind: 'tenant' | 'key', id: string): Promise<number> {
    this.reads++;
    return Math.round(Number(this.spentUsd[`${kind}:${id}`] ?? '0') * 1e9);
  }
}

function guard(spent: Record<string, string> = {}) {
  const crossings: ThresholdCrossing[] = [];
  const seeds = new FixedSpend(spent);
  return { guard: new BudgetGuard(new LimitsRedis(null, 'test'), seeds, (c) => crossings.push(c), () => NOW), crossings, seeds };
}

const tenant = (monthlyUsd: string, extra: Partial<BudgetScope['budget']> = {}): BudgetScope =>
  ({ kind: 'tenant', id: 'acme', tenantId: 'acme', budget: { monthlyUsd, softPct: 50, enforcement: 'hard', ...extra } });

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe('BudgetGuard (in process)', () => {
  test('in-flight reservations count: the third concurrent request does not fit, and settlement frees what was not spent', async () => {
    const { guard: budgets } = guard();
    const first = await budgets.reserve([tenant('1.00')], '0.40', HOLD);
    await budgets.reserve([tenant('1.00')], '0.40', HOLD);
    const error = await refusal(budgets.reserve([tenant('1.00')], '0.40', HOLD));
    expect([error.status, error.code]).toEqual([402, 'budget_exceeded']);
    expect(error.detail).toEqual({ scope: 'tenant:acme', period: 'month', resets_at: '2027-01-01T00:00:00.000Z', setting: 'tenants[acme].budget.monthlyUsd' });
    // $0.80 is reserved by the two in flight, nothing spent yet: not exhausted, this request does not fit.
    expect(error.message).toContain("This request may cost up to $0.4; $0.2 of the monthly $1.00 budget of tenant 'acme' remains ($0 spent, $0.8 reserved by requests in flight).");
    expect(error.headers['retry-after']).toBe('3600'); // an hour before the new year, UTC
    first.settle('0.10');
    await new Promise((resolve) => setImmediate(resolve));
    await budgets.reserve([tenant('1.00')], '0.40', HOLD);
  });

  test('a counter starts from the spend the ledger recorded for the period, read once', async () => {
    const { guard: budgets, seeds } = guard({ 'tenant:acme': '0.90' });
    await budgets.reserve([tenant('1.00')], '0.05', HOLD);
    await refusal(budgets.reserve([tenant('1.00')], '0.06', HOLD));
    expect(seeds.reads).toBe(1);
  });

  test('thresholds are reported when settled spend crosses them, each once; a soft budget never refuses', async () => {
    const { guard: budgets, crossings } = guard();
    const soft = tenant('1.00', { enforcement: 'soft' });
    for (let i = 0; i < 12; i++) (await budgets.reserve([soft], '0.10', HOLD)).settle('0.10');
    await new Promise((resolve) => setImmediate(resolve));
    expect(crossings.map((c) => [c.pct, c.period, c.spentUsd])).toEqual([[50, 'month:2026-12', '0.5'], [100, 'month:2026-12', '1']]);
  });

  test('a key budget and a daily amount are separate counters', async () => {
    const { guard: budgets } = guard();
    const key: BudgetScope = { kind: 'key', id: 'app', tenantId: 'acme', budget: { dailyUsd: '0.10', softPct: 80, enforcement: 'hard' } };
    await budgets.reserve([tenant('10'), key], '0.08', HOLD);
    const error = await refusal(budgets.reserve([tenant('10'), key], '0.08', HOLD));
    expect(error.detail).toEqual({ scope: 'key:app', period: 'day', resets_at: '2027-01-01T00:00:00.000Z', setting: 'apiKeys[app].budget.dailyUsd' });
    // Nothing was charged to the tenant by the refused request.
    await budgets.reserve([tenant('0.16')], '0.08', HOLD);
  });

  test('periods and reset times are UTC calendar periods', () => {
    const at = new Date(NOW);
    expect([periodId('month', at), periodId('day', at)]).toEqual(['month:2026-12', 'day:2026-12-31']);
    expect(periodEndOf('day', at).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });
});

/**
 * A budget refusal says what is true (issue 34): at 0 % used the reservation is the cause, at 70 % what
 * remains is too little for this request, and only at 100 % (spend and reservations in flight) is the
 * budget exhausted. Monthly and daily, tenant and key budgets, each naming its setting.
 */
describe('what a budget refusal says', () => {
  // 2.50 / 10.00 USD per million tokens: 1,024 output tokens and 12 input cost $0.01027.
  const basis = (sent: boolean, outputTokens = 1024): CostBasis =>
    ({ inputTokens: 12, outputTokens, route: 'chat#2', outputCap: { parameter: 'max_tokens', sent } });
  const keyScope = (dailyUsd: string): BudgetScope => ({ kind: 'key', id: 'app', tenantId: 'acme', budget: { dailyUsd, softPct: 80, enforcement: 'hard' } });

  test('0 %: a new tenant with a tiny budget is refused by the reservation itself, and told so, not "exhausted"', async () => {
    const { guard: budgets } = guard();
    const error = await refusal(budgets.reserve([tenant('0.0001')], '0.01027', { ...HOLD, basis: basis(false) }));
    expect([error.status, error.code]).toEqual([402, 'budget_exceeded']);
    expect(error.message).toBe(
      'This request may cost up to $0.01027 (1,024 output tokens (the default without max_tokens) and 12 input tokens at the price of the dearest route, chat#2); ' +
      "$0.0001 of the monthly $0.0001 budget of tenant 'acme' remains ($0 spent, $0 reserved by requests in flight). " +
      'Send max_tokens to reserve less, or raise tenants[acme].budget.monthlyUsd. It resets at 2027-01-01T00:00:00.000Z.',
    );
    expect(error.message).not.toContain('exhausted');
  });

  test('70 %: what remains and what this request needs; a request that set max_tokens is told to lower it', async () => {
    const { guard: budgets } = guard({ 'tenant:acme': '3.50' });
    const error = await refusal(budgets.reserve([tenant('5.00')], '1.6', { ...HOLD, basis: basis(true, 160_000) }));
    expect(error.message).toBe(
      'This request may cost up to $1.6 (160,000 output tokens and 12 input tokens at the price of the dearest route, chat#2); ' +
      "$1.5 of the monthly $5.00 budget of tenant 'acme' remains ($3.5 spent, $0 reserved by requests in flight). " +
      'Lower max_tokens to reserve less, or raise tenants[acme].budget.monthlyUsd. It resets at 2027-01-01T00:00:00.000Z.',
    );
    // A request that fits what remains is admitted.
    await budgets.reserve([tenant('5.00')], '1.5', HOLD);
  });

  test('100 %: exhausted, with what was spent and what requests in flight hold, and when it resets', async () => {
    const { guard: budgets } = guard({ 'tenant:acme': '5' });
    const error = await refusal(budgets.reserve([tenant('5.00')], '0.000001', { ...HOLD, basis: basis(true, 8) }));
    expect(error.message).toBe(
      "The monthly budget of tenant 'acme' is exhausted: $5 of $5.00 spent, $0 reserved by requests in flight. " +
      'It resets at 2027-01-01T00:00:00.000Z (tenants[acme].budget.monthlyUsd).',
    );
    expect(error.headers['retry-after']).toBe('3600');
  });

  test('spend and reservations in flight reaching the budget is exhausted too; a cache hit (reserving nothing) only once spend passed it', async () => {
    const { guard: budgets } = guard({ 'tenant:acme': '0.6' });
    const inFlight = await budgets.reserve([tenant('1.00')], '0.4', HOLD);
    const error = await refusal(budgets.reserve([tenant('1.00')], '0.000001', { ...HOLD, basis: basis(true, 1) }));
    expect(error.message).toContain("The monthly budget of tenant 'acme' is exhausted: $0.6 of $1.00 spent, $0.4 reserved by requests in flight.");
    await budgets.reserve([tenant('1.00')], '0', HOLD);
    // The request in flight cost more than it reserved: spend is past the budget.
    inFlight.settle('0.5');
    await new Promise((resolve) => setImmediate(resolve));
    const hit = await refusal(budgets.reserve([tenant('1.00')], '0', HOLD));
    expect(hit.message).toContain("is exhausted: $1.1 of $1.00 spent, $0 reserved by requests in flight.");
  });

  test('daily key budgets: the same three cases, named by the key and its setting', async () => {
    const fresh = guard();
    const zero = await refusal(fresh.guard.reserve([keyScope('0.0001')], '0.01027', { ...HOLD, basis: basis(false) }));
    expect(zero.message).toContain("$0.0001 of the daily $0.0001 budget of API key 'app' remains ($0 spent, $0 reserved by requests in flight). Send max_tokens to reserve less, or raise apiKeys[app].budget.dailyUsd.");
    expect(zero.detail).toMatchObject({ scope: 'key:app', period: 'day', setting: 'apiKeys[app].budget.dailyUsd' });
    // The day ends at midnight UTC: an hour from NOW.
    expect(zero.message).toContain('It resets at 2027-01-01T00:00:00.000Z.');
    const seventy = await refusal(guard({ 'key:app': '0.7' }).guard.reserve([keyScope('1')], '0.5', { ...HOLD, basis: basis(true, 50_000) }));
    expect(seventy.message).toContain("This request may cost up to $0.5 (50,000 output tokens and 12 input tokens at the price of the dearest route, chat#2); $0.3 of the daily $1 budget of API key 'app' remains ($0.7 spent");
    expect(seventy.message).not.toContain('exhausted');
    const spent = await refusal(guard({ 'key:app': '1' }).guard.reserve([keyScope('1')], '0.01', { ...HOLD, basis: basis(true) }));
    expect(spent.message).toBe("The daily budget of API key 'app' is exhausted: $1 of $1 spent, $0 reserved by requests in flight. It resets at 2027-01-01T00:00:00.000Z (apiKeys[app].budget.dailyUsd).");
  });

  test('output that is not capped (embeddings) gets no max_tokens advice, only the setting', async () => {
    const { guard: budgets } = guard();
    const error = await refusal(budgets.reserve([tenant('0.000001')], '0.00002', { ...HOLD, basis: { inputTokens: 200, outputTokens: 0, route: 'embed#1', outputCap: null } }));
    expect(error.message).toContain('This request may cost up to $0.00002 (200 input tokens at the price of the dearest route, embed#1);');
    expect(error.message).toContain('Raise tenants[acme].budget.monthlyUsd to allow it.');
    expect(error.message).not.toContain('max_tokens');
  });
});

describe('budget and limit configuration', () => {
  const yaml = (tenantBlock: string, alias = '') => `
providers: [{ id: p, type: mock }]
deployments: [{ id: d, provider: p, model: m, price: { inputPer1M: "1", outputPer1M: "1" } }]
aliases: [{ name: chat, routes: [{ deployment: d }]${alias} }]
tenants:
  - id: acme
${tenantBlock}
`;
  const problems = (text: string) => {
    try {
      parseGatewayConfig(text);
      return [];
    } catch (error) {
      return (error as ConfigValidationError).problems;
    }
  };

  test('daily budgets, webhooks, token limits and alias limits are read; unset members are left out', () => {
    const config = parseGatewayConfig(yaml(`    limits: { rpm: 5, inputTpm: 100 }
    budget: { dailyUsd: "2.5", webhook: { url: "https://hooks.example.com/b", secret: env:HOOK_KEY } }`, ', policy: { limits: { tpm: 1000 }, budgetDowngrade: chat2 } }, { name: chat2, routes: [{ deployment: d }]'));
    expect(config.tenants[0].limits).toEqual({ rpm: 5, tpm: null, inputTpm: 100, maxConcurrency: null });
    expect(config.tenants[0].budget).toEqual({ dailyUsd: '2.5', softPct: 80, enforcement: 'hard', webhook: { url: 'https://hooks.example.com/b', secret: 'env:HOOK_KEY' } });
    expect(config.aliases[0].policy).toMatchObject({ limits: { tpm: 1000 }, budgetDowngrade: 'chat2' });
  });

  test('mistakes are named with their path', () => {
    expect(problems(yaml('    budget: { softPct: 50 }'))).toEqual(['tenants[0].budget: needs monthlyUsd or dailyUsd (or both)']);
    expect(problems(yaml('    limits: { rpm: 0 }'))).toEqual(['tenants[0].limits.rpm: must be a positive integer (leave it out for no limit)']);
    expect(problems(yaml('    budget: { monthlyUsd: "1", webhook: { url: "https://x.example", secret: "plain" } }')))
      .toEqual(['tenants[0].budget.webhook.secret: must be a secret reference (env:NAME or file:PATH), never the secret itself']);
    expect(problems(yaml('', ', policy: { budgetDowngrade: nowhere }'))).toEqual(["aliases[0].policy.budgetDowngrade: names alias 'nowhere', which this file does not declare (a file refers only to what it declares; `switchyard config export` writes the running definitions as one)"]);
  });
});
