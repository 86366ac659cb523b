import { randomUUID } from 'node:crypto';
import { analyticsYaml, mixedTraffic } from '../support/analytics-fixtures.js';
import { type ScratchClickHouse, scratchClickHouse } from '../support/clickhouse.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { createScratchDatabase, requireService } from '../support/services.js';

/**
 * Issue 32, item 3: a log that already holds the bad events — AttemptFinished v1 recorded with a
 * provider's 3e9, 1e308, negative or fractional usage before the boundary existed — is read through the
 * v1 → v2 upcaster: the cost ledger, tenant spend and ClickHouse analytics move past them (never wedge),
 * bill them within the bound, and a rebuild reproduces the same rows. The stored events are untouched.
 */
const databaseUrl = requireService('DATABASE_URL');
const clickhouseUrl = requireService('CLICKHOUSE_URL');
const describeWithServices = databaseUrl && clickhouseUrl ? describe : describe.skip;
const DURABLE = ['cost-ledger', 'clickhouse-analytics'];

/** What the gateway wrote before the boundary, for usage a provider reported (prices: the primary's $2.50 / $10 per million). */
const BAD_EVENTS: Array<{ name: string; usage: Record<string, unknown>; cost: Record<string, string> }> = [
  { name: '3e9 prompt tokens', usage: { input: 3_000_000_000 }, cost: { input: '7500.000000000000', total: '7500.000100000000' } },
  { name: '1e308 prompt tokens', usage: { input: 1e308 }, cost: { input: `${'25'.padEnd(305, '0')}.000000000000`, total: `${'25'.padEnd(305, '0')}.000100000000` } },
  { name: 'negative output', usage: { output: -1_000_000 }, cost: { output: '-10.000000000000', total: '-9.999975000000' } },
  { name: 'fractional input', usage: { input: 10.7 }, cost: { input: '0.000026750000', total: '0.000126750000' } },
];

function v1Attempt(requestId: string, usage: Record<string, unknown>, cost: Record<string, string>) {
  return {
    requestId, attempt: 1, tenantId: 'acme', keyId: 'acme-app', alias: 'chat', deploymentId: 'primary', providerId: 'mock-upstream', model: 'model-primary',
    outcome: 'success', errorClass: null, httpStatus: 200, deadline: null,
    usage: { input: 10, cachedInput: 0, cacheWrite: 0, output: 10, reasoning: 0, ...usage },
    usageEvidence: 'provider',
    cost: { input: '0.000025000000', cachedInput: '0.000000000000', cacheWrite: '0.000000000000', output: '0.000100000000', total: '0.000125000000', currency: 'USD', ...cost },
    priceVersion: 1, latencyMs: 12, ttftMs: null, providerRequestId: null,
    routing: { strategy: 'priority', candidates: ['primary'], reason: 'recorded by an older version' },
  };
}

describeWithServices('a log holding AttemptFinished events recorded with implausible usage (schema 1) rebuilds', () => {
  let db: { url: string; drop: () => Promise<void> };
  let ch: ScratchClickHouse;
  let gw: TestGateway;
  const badIds: string[] = [];
  const query = <Row = Record<string, unknown>>(sql: string, params: unknown[] = []) => gw.gateway.platform.database.query<Row>(sql, params);
  const settle = async () => {
    await gw.gateway.platform.committer.drain();
    await gw.gateway.platform.runner.catchUp(DURABLE);
  };
  const ledger = () => query(`SELECT request_id, attempt, input_tokens::text, output_tokens::text, cost_usd::text, usage_evidence FROM cost_ledger ORDER BY request_id, attempt`);
  const spend = () => query(`SELECT tenant_id, period, period_start::text, spent_usd::text FROM tenant_spend ORDER BY 1, 2, 3`);

  beforeAll(async () => {
    db = await createScratchDatabase(databaseUrl!);
    ch = scratchClickHouse(clickhouseUrl!);
    gw = await startTestGateway({ databaseUrl: db.url, yaml: analyticsYaml, environment: { clickhouseUrl: ch.url } });
    await mixedTraffic(gw.url, gw.key, 5);
    // The old version's events, appended as it appended them (schema 1), between ordinary traffic.
    for (const bad of BAD_EVENTS) {
      const requestId = randomUUID();
      badIds.push(requestId);
      const metadata = { actor: 'key:acme-app', correlationId: requestId, nodeId: 'old-node' };
      await gw.gateway.platform.store.append({
        streamId: `request-${requestId}`,
        expectedVersion: 'no-stream',
        events: [
          { type: 'RequestAdmitted', schemaVersion: 1, metadata, data: { requestId, tenantId: 'acme', keyId: 'acme-app', alias: 'chat', aliasVersion: 1, snapshotPosition: 1, clientFormat: 'openai', operation: 'chat', stream: false, estimatedInputTokens: 10, reservedOutputTokens: 1024, idempotencyKey: null } },
          { type: 'AttemptFinished', schemaVersion: 1, metadata, data: v1Attempt(requestId, bad.usage, bad.cost) },
        ],
      });
    }
    await mixedTraffic(gw.url, gw.key, 5);
  }, 120_000);

  afterAll(async () => {
    await gw?.close();
    await db?.drop();
    await ch?.drop();
  });

  test('the ledger and ClickHouse move past them to the head; each is billed within the bound, never negative, marked implausible', async () => {
    await settle();
    const behind = await query<{ n: string }>(
      `SELECT count(*)::text AS n FROM events e, projection_checkpoints c WHERE c.name = 'cost-ledger' AND e.event_type = 'AttemptFinished' AND (e.transaction_id, e.global_position) > (c.transaction_id, c.global_position)`,
    );
    expect(behind[0].n).toBe('0');
    const rows = await query<Record<string, string>>(`SELECT request_id, input_tokens::text, output_tokens::text, cost_usd::text, usage_evidence FROM cost_ledger WHERE request_id = ANY($1) ORDER BY request_id`, [badIds]);
    expect(rows).toHaveLength(BAD_EVENTS.length);
    for (const row of rows) {
      expect(row.usage_evidence).toBe('implausible');
      expect(Number(row.input_tokens)).toBeGreaterThanOrEqual(0);
      expect(Number(row.output_tokens)).toBeGreaterThanOrEqual(0);
      expect(Number(row.cost_usd)).toBeGreaterThanOrEqual(0);
      expect(Number(row.cost_usd)).toBeLessThan(0.001);
    }
    const [minimum] = await query<{ least: string }>(`SELECT min(spent_usd)::text AS least FROM tenant_spend`);
    expect(Number(minimum.least)).toBeGreaterThanOrEqual(0);
    const analytics = await ch.rows<{ n: string; bad: string }>(
      `SELECT toString(count()) AS n, toString(countIf(usage_evidence = 'implausible')) AS bad FROM ${ch.database}.attempts WHERE request_id IN (${badIds.map((id) => `'${id}'`).join(',')})`,
    );
    expect(analytics[0]).toEqual({ n: String(BAD_EVENTS.length), bad: String(BAD_EVENTS.length) });
    // The events themselves are as they were recorded: their reading changed, not their bytes.
    const stored = await query<{ schema_version: number; input: string }>(`SELECT schema_version, data->'usage'->>'input' AS input FROM events WHERE stream_id = $1 AND event_type = 'AttemptFinished'`, [`request-${badIds[0]}`]);
    expect(stored).toEqual([{ schema_version: 1, input: '3000000000' }]);
  });

  test('a rebuild from position zero reproduces the ledger and spend row for row', async () => {
    await settle();
    const [ledgerBefore, spendBefore] = [await ledger(), await spend()];
    await gw.gateway.platform.runner.rebuild('cost-ledger');
    await settle();
    expect(await ledger()).toEqual(ledgerBefore);
    expect(await spend()).toEqual(spendBefore);
  });
});
