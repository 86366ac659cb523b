import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { BudgetGuard, type BudgetScope } from '../../modules/limits/budget/budget-guard.js';
import { SpendSeeds } from '../../modules/limits/budget/spend-seeds.js';
import { LimitsRedis } from '../../modules/limits/limits-redis.js';
import { requireService } from '../support/services.js';

const redisUrl = requireService('REDIS_URL');
const describeWithRedis = redisUrl ? describe : describe.skip;

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(GatewayError);
  expect((error as GatewayError).status).toBe(402);
  return error as GatewayError;
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 50));

/** The cost ledger as the guard reads it: what each request was billed, nothing else. */
class Ledger extends SpendSeeds {
  readonly billed = new Map<string, string>();
  constructor() {
    super({ query: async () => [] });
  }

  override async billedNano(requestId: string): Promise<number> {
    return Math.round(Number(this.billed.get(requestId) ?? '0') * 1e9);
  }
}

/**
 * A node killed with requests in flight never settles their budget reservations. In Redis each
 * reservation is a hold that ends when its request must have ended: past it, the next reservation on
 * the counter takes it out and it becomes what the ledger billed the request — nothing when it died
 * before its events were committed, its cost when it died between the commit and the settlement.
 */
describeWithRedis('budget reservations held in Redis, reconciled when their node died', () => {
  const redisA = new LimitsRedis(redisUrl, 'hold-a');
  const redisB = new LimitsRedis(redisUrl, 'hold-b');
  beforeAll(() => Promise.all([redisA.start(), redisB.start()]));
  afterAll(() => Promise.all([redisA.close(), redisB.close()]));

  test('the dead node\'s reservations count while they may still settle, then become what the ledger billed, once', async () => {
    // Unique: Redis is shared, and a month's counter outlives the test.
    const id = `hold-${randomBytes(4).toString('hex')}`;
    const scope: BudgetScope = { kind: 'tenant', id, tenantId: id, budget: { monthlyUsd: '1.00', softPct: 50, enforcement: 'hard' } };
    let now = Date.now();
    const ledger = new Ledger();
    const dying = new BudgetGuard(redisA, ledger, () => undefined, () => now);
    const living = new BudgetGuard(redisB, ledger, () => undefined, () => now);
    const hold = (requestId: string) => ({ holdMs: 10_000, requestId: `${id}-${requestId}` });

    // Node A: one request settled normally ($0.20 of its $0.30), two left in flight ($0.30 each).
    (await dying.reserve([scope], '0.30', hold('r1'))).settle('0.20');
    await settled();
    await dying.reserve([scope], '0.30', hold('r2'));
    const r3 = await dying.reserve([scope], '0.30', hold('r3'));
    // While they may still settle they count, on every node: 0.20 + 0.60 committed.
    expect((await refusal(living.reserve([scope], '0.30', hold('b1')))).message).toContain('$0.2 of the monthly $1.00 budget of tenant');
    expect((await refusal(living.reserve([scope], '0.30', hold('b1')))).message).toContain('remains ($0.2 spent, $0.6 reserved by requests in flight)');

    // A dies: r2 before its events were committed, r3 after (the ledger bills it $0.25) but before settling.
    ledger.billed.set(`${id}-r3`, '0.25');
    now += 9_000;
    expect((await refusal(living.reserve([scope], '0.30', hold('b2')))).message).toContain('remains ($0.2 spent, $0.6 reserved by requests in flight)');
    // Past the requests' longest life: 0.20 + 0 + 0.25, and this reservation fits.
    now += 1_001;
    const b3 = await living.reserve([scope], '0.30', hold('b3'));
    expect((await refusal(living.reserve([scope], '0.30', hold('b4')))).message).toContain('$0.25 of the monthly $1.00 budget of tenant');
    expect((await refusal(living.reserve([scope], '0.30', hold('b4')))).message).toContain('remains ($0.45 spent, $0.3 reserved by requests in flight)');
    b3.settle('0.30');
    await settled();
    await living.reserve([scope], '0.25', hold('b5'));

    // A settlement that still arrives for a reconciled hold is not counted a second time.
    r3.settle('0.25');
    await settled();
    expect((await refusal(living.reserve([scope], '0.01', hold('b6')))).message).toContain('is exhausted: $0.75 of $1.00 spent, $0.25 reserved by requests in flight');
  });
});
