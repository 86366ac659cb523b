import { attemptCost } from '../../modules/inference/pricing/attempt-cost.js';
import type { AttemptFinished } from '../../events/index.js';
import { AdminClient } from '../support/admin-client.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';
import { sendRequest } from '../support/load.js';
import { waitUntil } from '../support/resilience.js';

const ADMIN_TOKEN = 'ledger-admin-token-0123456789abcdef';

interface LedgerRow {
  request_id: string;
  attempt: number;
  outcome: string;
  price_version: number;
  cost_usd: string;
  cached_input_tokens: string;
  output_tokens: string;
}

/**
 * The ledger across a price change (embedded store): every billable attempt is priced at the price
 * version in effect at its admission — cached input at that version's cached price — and stored with
 * that version; a stream the client cut off is billed for the tokens it produced; a rebuild reproduces
 * every row, once.
 */
describe('cost ledger across price versions', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ environment: { adminToken: ADMIN_TOKEN } });
  }, 60_000);
  afterAll(() => gw?.close());

  async function rows(): Promise<LedgerRow[]> {
    await gw.gateway.platform.runner.catchUp(['cost-ledger']);
    return gw.gateway.platform.database.query<LedgerRow>(
      `SELECT request_id, attempt, outcome, price_version, cost_usd::text AS cost_usd, cached_input_tokens, output_tokens FROM cost_ledger ORDER BY global_position`);
  }
  const attemptOf = async (requestId: string) =>
    (await gw.requestEvents(requestId)).find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];

  test('version 1 before the change, version 2 after; cached input at each version\'s cached price; a cut stream billed for what it produced', async () => {
    gw.mock.addScenario({ model: 'model-primary', times: 2, behaviour: { cachedTokens: 4 } });
    const before = await postJson(gw, '/v1/chat/completions', { model: 'solo', messages: [{ role: 'user', content: 'Before the price change, please.' }] });
    expect(before.status).toBe(200);

    const admin = new AdminClient(gw.url, ADMIN_TOKEN);
    const scheduled = await admin.post('/deployments/primary/prices', { inputPer1M: '5.00', outputPer1M: '20.00', cachedInputPer1M: '0.50', cacheWritePer1M: '6.25' });
    expect(scheduled.status).toBe(201);
    const after = await postJson(gw, '/v1/chat/completions', { model: 'solo', messages: [{ role: 'user', content: 'After the price change, please.' }] });
    expect(after.status).toBe(200);

    gw.mock.addScenario({ model: 'model-primary', times: 1, behaviour: { chunks: 200, chunkGapMs: 5 } });
    const cut = await sendRequest(gw.url, gw.key, 'disconnect', 'solo');
    expect(cut.status).toBe(200);
    await waitUntil(async () => (await gw.requestEvents(cut.requestId!)).some((e) => e.type === 'RequestCompleted'), 5_000, 'the cut stream settles');

    const v1 = { inputPer1M: '2.50', outputPer1M: '10.00', cachedInputPer1M: '1.25', cacheWritePer1M: null, reasoningPer1M: null, currency: 'USD' as const };
    const v2 = { ...v1, inputPer1M: '5.00', outputPer1M: '20.00', cachedInputPer1M: '0.50', cacheWritePer1M: '6.25' };
    const [a, b, c] = [await attemptOf(before.headers.get('x-request-id')!), await attemptOf(after.headers.get('x-request-id')!), await attemptOf(cut.requestId!)];
    expect([a.priceVersion, b.priceVersion, c.priceVersion]).toEqual([1, 2, 2]);
    expect(a.usage.cachedInput).toBe(4);
    expect(a.cost).toEqual(attemptCost(a.usage, v1));
    expect(b.cost).toEqual(attemptCost(b.usage, v2));
    expect(c.outcome).toBe('cancelled');
    expect(c.usage.output).toBeGreaterThan(0);
    expect(c.usage.output).toBeLessThan(200);
    expect(c.cost).toEqual(attemptCost(c.usage, v2));

    const ledger = await rows();
    expect(ledger.map((r) => [r.request_id, r.outcome, r.price_version])).toEqual([
      [a.requestId, 'success', 1], [b.requestId, 'success', 2], [c.requestId, 'cancelled', 2],
    ]);
    for (const [row, attempt] of [[ledger[0], a], [ledger[1], b], [ledger[2], c]] as const) {
      expect(Number(row.cost_usd).toFixed(12)).toBe(attempt.cost.total);
      expect(Number(row.output_tokens)).toBe(attempt.usage.output); // bigint: read as decimal text
    }

    // Exactly once: replaying the whole log rebuilds the same rows, no more.
    await gw.gateway.platform.runner.rebuild('cost-ledger');
    expect(await rows()).toEqual(ledger);
  }, 30_000);
});
