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

/**
 * A node killed with requests in flight never settles their budget reservations. In Redis each
 * reservation is a hold that ends when the request must have ended: past it the reservation is given
 * back (not only when the month's counter expires), and a settlement that still comes is counted once.
 */
describeWithRedis('budget reservations held in Redis, given back when their node died', () => {
  const redisA = new LimitsRedis(redisUrl, 'hold-a');
  const redisB = new LimitsRedis(redisUrl, 'hold-b');
  beforeAll(() => Promise.all([redisA.start(), redisB.start()]));
  afterAll(() => Promise.all([redisA.close(), redisB.close()]));

  test('the dead node\'s reservations count while they may still settle, then come back; a late settlement adds only its cost', async () => {
    // Unique: Redis is shared, and a month's counter outlives the test.
    const id = `hold-${randomBytes(4).toString('hex')}`;
    const scope: BudgetScope = { kind: 'tenant', id, tenantId: id, budget: { monthlyUsd: '1.00', softPct: 50, enforcement: 'hard' } };
    let now = Date.now();
    const nobody = new SpendSeeds({ query: async () => [] });
    const dying = new BudgetGuard(redisA, nobody, () => undefined, () => now);
    const living = new BudgetGuard(redisB, nobody, () => undefined, () => now);
    const hold = { holdMs: 10_000 };

    // Node A: one request settled normally ($0.20 of its $0.30), two left in flight ($0.30 each).
    (await dying.reserve([scope], '0.30', hold)).settle('0.20');
    await settled();
    await dying.reserve([scope], '0.30', hold);
    const late = await dying.reserve([scope], '0.30', hold);
    // While they may still settle they count, on every node: 0.20 + 0.60 committed.
    expect((await refusal(living.reserve([scope], '0.30', hold))).message).toContain('$0.8 spent or reserved');

    // A dies. Past the requests' longest life their reservations are given back, the settled spend stays.
    now += 10_001;
    const next = await living.reserve([scope], '0.30', hold);
    expect((await refusal(living.reserve([scope], '0.60', hold))).message).toContain('$0.5 spent or reserved');

    // One of A's requests was only slow: it settles after its hold ended and counts its actual cost, once.
    late.settle('0.25');
    next.settle('0.30');
    await settled();
    expect((await refusal(living.reserve([scope], '0.30', hold))).message).toContain('$0.75 spent or reserved');
    await living.reserve([scope], '0.25', hold);
  });
});
