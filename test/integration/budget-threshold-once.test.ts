import { BudgetAlerts } from '../../modules/limits/budget/budget-alerts.js';
import type { ThresholdCrossing } from '../../modules/limits/index.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';

/**
 * Two nodes that both saw the same crossing (e.g. each counting on its own while Redis was away) record
 * it through the tenant stream's expected version: one appends, the others decide again and append
 * nothing. The event store, not a lock, makes it exactly once.
 */
describe('a budget threshold is recorded exactly once per period', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  }, 60_000);
  afterAll(() => gw?.close());

  const crossing = (pct: number, period = 'month:2026-12'): ThresholdCrossing => ({
    scope: { kind: 'tenant', id: 'acme', tenantId: 'acme', budget: { monthlyUsd: '10', softPct: 80, enforcement: 'hard' } },
    period, pct, spentUsd: '8.01', budgetUsd: '10',
  });
  const count = async () => Number((await gw.gateway.platform.database.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM events WHERE stream_id = 'tenant-acme' AND event_type = 'BudgetThresholdCrossed'`))[0].n);

  test('twelve concurrent recordings on three nodes append one event; another threshold or period is its own', async () => {
    const nodes = ['a', 'b', 'c'].map((id) => new BudgetAlerts(gw.gateway.platform.executor, `node-${id}`));
    const appended = await Promise.all(Array.from({ length: 12 }, (_, i) => nodes[i % 3].record(crossing(80))));
    expect(appended.filter(Boolean)).toHaveLength(1);
    expect(await count()).toBe(1);
    expect(await nodes[0].record(crossing(100))).toBe(true);
    expect(await nodes[1].record(crossing(80, 'month:2027-01'))).toBe(true);
    expect(await nodes[2].record(crossing(80))).toBe(false);
    expect(await count()).toBe(3);
  });
});
