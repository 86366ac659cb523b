import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { BudgetGuard, type BudgetScope, type ThresholdCrossing } from '../../modules/limits/budget/budget-guard.js';
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
    expect(error.detail).toEqual({ scope: 'tenant:acme', period: 'month', resets_at: '2027-01-01T00:00:00.000Z' });
    expect(error.message).toContain("The budget of tenant 'acme' is exhausted: $1.00 per month, $0.8 spent or reserved");
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
    expect(error.detail).toEqual({ scope: 'key:app', period: 'day', resets_at: '2027-01-01T00:00:00.000Z' });
    // Nothing was charged to the tenant by the refused request.
    await budgets.reserve([tenant('0.16')], '0.08', HOLD);
  });

  test('periods and reset times are UTC calendar periods', () => {
    const at = new Date(NOW);
    expect([periodId('month', at), periodId('day', at)]).toEqual(['month:2026-12', 'day:2026-12-31']);
    expect(periodEndOf('day', at).toISOString()).toBe('2027-01-01T00:00:00.000Z');
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
    expect(problems(yaml('', ', policy: { budgetDowngrade: nowhere }'))).toEqual(["aliases[0].policy.budgetDowngrade: names alias 'nowhere', which is not declared"]);
  });
});
