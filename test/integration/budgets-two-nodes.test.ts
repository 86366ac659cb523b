import { createHmac, randomBytes } from 'node:crypto';
import { type IncomingMessage, type Server, createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { Decimal } from 'decimal.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';
import { waitUntil } from '../support/resilience.js';
import { AdminClient } from '../support/admin-client.js';
import { runCli } from '../support/cli-process.js';
import { csvObjects } from '../support/csv.js';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { createScratchDatabase, requireService } from '../support/services.js';
import { listenOn, testPort } from '../support/port-range.js';

const databaseUrl = requireService('DATABASE_URL');
const redisUrl = requireService('REDIS_URL');
const describeWithServices = databaseUrl && redisUrl ? describe : describe.skip;

/** This suite's own port (port-range.ts). */
const HOOK_PORT = testPort(1110);
const ADMIN_TOKEN = 'budget-admin-token-0123456789abcdef';

/**
 * A tenant budget of $1.00 hit by concurrent requests spread over two gateway nodes sharing PostgreSQL
 * and Redis: spend never passes $1.00 by more than one request's cost, the caller then gets 402 with the
 * reset time, and the soft threshold is recorded once and delivered once to a signed webhook.
 */
describeWithServices('budgets across two nodes (Redis + PostgreSQL)', () => {
  // Unique ids: Redis is shared with other runs, and a month's budget counter outlives the test.
  const tenant = `budget-${randomBytes(4).toString('hex')}`;
  const hookSecret = randomBytes(16).toString('hex');
  process.env.SY_TEST_BUDGET_HOOK_KEY = hookSecret;
  const frugalKey = generateApiKey();
  process.env.SY_TEST_BUDGET_FRUGAL_KEY = frugalKey;
  let scratch: { url: string; drop: () => Promise<void> };
  let nodeA: TestGateway;
  let nodeB: TestGateway;
  let hook: Server;
  const deliveries: Array<{ body: string; signature: string }> = [];

  const yaml = (mockUrl: string, keyEnv: string) => `
providers:
  - id: mock-upstream
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true
    apiKey: env:SY_TEST_UPSTREAM_KEY
deployments:
  - id: pricey
    provider: mock-upstream
    model: model-pricey
    price: { inputPer1M: "100", outputPer1M: "2000" }
  - id: thrifty
    provider: mock-upstream
    model: model-thrifty
    price: { inputPer1M: "0.01", outputPer1M: "0.02" }
aliases:
  - name: chat
    routes: [{ deployment: pricey }]
  - name: premium
    routes: [{ deployment: pricey }]
    policy: { budgetDowngrade: cheap }
  - name: cheap
    routes: [{ deployment: thrifty }]
tenants:
  - id: ${tenant}-frugal
    budget: { dailyUsd: "0.01" }
  - id: ${tenant}
    budget:
      monthlyUsd: "1.00"
      softPct: 50
      webhook: { url: "http://127.0.0.1:${HOOK_PORT}/budget", secret: env:SY_TEST_BUDGET_HOOK_KEY, allowPrivateNetwork: true }
apiKeys:
  - id: ${tenant}-app
    tenant: ${tenant}
    key: env:${keyEnv}
  - id: ${tenant}-frugal-app
    tenant: ${tenant}-frugal
    key: env:SY_TEST_BUDGET_FRUGAL_KEY
`;

  beforeAll(async () => {
    hook = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        deliveries.push({ body, signature: String(req.headers['x-switchyard-signature'] ?? '') });
        res.writeHead(204).end();
      });
    });
    await listenOn(hook, HOOK_PORT);
    scratch = await createScratchDatabase(databaseUrl!);
    nodeA = await startTestGateway({ databaseUrl: scratch.url, yaml, environment: { redisUrl, nodeId: 'budget-a', adminToken: ADMIN_TOKEN } });
    const config = readFileSync(nodeA.configPath, 'utf8');
    nodeB = await startTestGateway({ databaseUrl: scratch.url, yaml: () => config, environment: { redisUrl, nodeId: 'budget-b', adminToken: ADMIN_TOKEN } });
  }, 60_000);
  afterAll(async () => {
    await nodeB?.close();
    await nodeA?.close();
    await scratch?.drop();
    await new Promise((resolve) => hook?.close(resolve));
  });

  const ask = (gw: TestGateway) =>
    postJson({ ...gw, key: nodeA.key }, '/v1/chat/completions', { model: 'chat', max_tokens: 20, messages: [{ role: 'user', content: 'Spend a little.' }] });

  test('concurrent spend on two nodes stops within one request of $1.00; then 402 with the reset time; the soft threshold once', async () => {
    const statuses: number[] = [];
    // 20 concurrent clients, alternating nodes, until every one of them has been refused.
    await Promise.all(Array.from({ length: 20 }, async (_, client) => {
      for (let i = 0; i < 40; i++) {
        const answer = await ask(client % 2 ? nodeB : nodeA);
        statuses.push(answer.status);
        if (answer.status === 402) return;
        expect(answer.status).toBe(200);
      }
    }));
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(10);
    expect(statuses.filter((s) => s === 402)).toHaveLength(20);

    const refused = await ask(nodeB);
    expect(refused.status).toBe(402);
    expect(refused.json.error.code).toBe('budget_exceeded');
    expect(refused.json.error.type).toBe('insufficient_quota');
    const nextMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1)).toISOString();
    expect(refused.json.error.message).toContain(`It resets at ${nextMonth}`);
    expect(refused.json.error.resets_at).toBe(nextMonth);
    expect(refused.json.error.scope).toBe(`tenant:${tenant}`);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

    // What was billed, from the events themselves (the ledger is checked against them below).
    const rows = await nodeA.gateway.platform.database.query<{ total: string; largest: string }>(
      `SELECT coalesce(sum((data->'cost'->>'total')::numeric), 0)::text AS total, coalesce(max((data->'cost'->>'total')::numeric), 0)::text AS largest
       FROM events WHERE event_type = 'AttemptFinished' AND data->>'tenantId' = $1`, [tenant]);
    const spent = new Decimal(rows[0].total);
    expect(spent.lte(new Decimal('1.00').plus(rows[0].largest))).toBe(true);
    expect(spent.gte('0.9')).toBe(true);
    // The ledger and the tenant's spend agree with the events to the last decimal.
    await waitUntil(async () => new Decimal(await ledgerTotal()).eq(spent), 10_000, 'the ledger has every billable attempt');
    const spend = await nodeA.gateway.platform.database.query<{ spent: string }>(
      `SELECT spent_usd::text AS spent FROM tenant_spend WHERE tenant_id = $1 AND period = 'month'`, [tenant]);
    expect(new Decimal(spend[0].spent).eq(spent)).toBe(true);

    // The soft threshold (50%) is recorded exactly once, although both nodes settled requests past it.
    await waitUntil(async () => (await thresholds()).length > 0, 5_000, 'the threshold is recorded');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const crossed = await thresholds();
    expect(crossed.filter((t) => t.pct === 50)).toHaveLength(1);
    expect(crossed.filter((t) => t.period !== crossed[0].period)).toHaveLength(0);

    // Delivered once, signed with the budget's secret; the delivery is recorded.
    await waitUntil(async () => (await alertsDelivered()) > 0, 5_000, 'the delivery is recorded');
    const fifty = deliveries.filter((d) => JSON.parse(d.body).pct === 50);
    expect(fifty).toHaveLength(1);
    const [, timestamp, signature] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(fifty[0].signature)!;
    expect(createHmac('sha256', hookSecret).update(`${timestamp}.${fifty[0].body}`).digest('hex')).toBe(signature);
    expect(JSON.parse(fifty[0].body)).toMatchObject({ type: 'budget.threshold_crossed', tenantId: tenant, pct: 50, budgetUsd: '1.00' });
  }, 30_000);

  test('spend is readable per tenant and per key by period, through the admin API and the CLI', async () => {
    const admin = new AdminClient(nodeB.url, ADMIN_TOKEN);
    const total = await ledgerTotal();
    const month = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1)).toISOString();
    const tenantSpend = await admin.get(`/tenants/${tenant}/spend?period=month`);
    expect(tenantSpend.status).toBe(200);
    expect(tenantSpend.json).toMatchObject({ tenant, period: 'month', budget: { monthlyUsd: '1.00', softPct: 50 } });
    expect(tenantSpend.json.data).toHaveLength(1);
    expect(tenantSpend.json.data[0].periodStart).toBe(month);
    expect(new Decimal(tenantSpend.json.data[0].spentUsd).eq(total)).toBe(true);
    const keySpend = await admin.get(`/keys/${tenant}-app/spend?period=day`);
    expect(keySpend.status).toBe(200);
    expect(new Decimal(keySpend.json.data[0].spentUsd).eq(total)).toBe(true);
    expect((await admin.get(`/keys/nobody/spend`)).status).toBe(404);
    expect((await admin.get(`/tenants/${tenant}/spend?period=week`)).status).toBe(400);

    // The CLI on DATABASE_URL: the ledger's money per tenant and model, as CSV that parses back to the same total.
    const cli = await runCli(['spend', '--tenant', tenant, '--group-by', 'tenant,model,alias', '--format', 'csv'],
      { ...process.env, DATABASE_URL: scratch.url, SWITCHYARD_DATA_DIR: ':memory:', CLICKHOUSE_URL: '', LOG_LEVEL: 'error' });
    expect(cli.code).toBe(0);
    const records = csvObjects(cli.stdout);
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((r) => r.tenant === tenant && r.period === month.slice(0, 7))).toBe(true);
    expect(records.reduce((sum, r) => sum.plus(r.cost_usd), new Decimal(0)).eq(total)).toBe(true);
    const perModel = await nodeA.gateway.platform.database.query<{ model: string; alias: string; cost: string }>(
      'SELECT model, alias, sum(cost_usd)::text AS cost FROM cost_ledger WHERE tenant_id = $1 GROUP BY 1, 2 ORDER BY model COLLATE "C", alias COLLATE "C"', [tenant]);
    expect(records.map((r) => [r.model, r.alias, r.cost_usd])).toEqual(perModel.map((r) => [r.model, r.alias, r.cost]));
    const refused = await runCli(['spend', '--period', 'day'], { ...process.env, DATABASE_URL: scratch.url, SWITCHYARD_DATA_DIR: ':memory:' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--period was replaced by --granularity day|week|month (default month)');
  }, 60_000); // two CLI processes: slow to start on a loaded machine

  test('an alias with a budget downgrade serves what the budget refuses through its target; without one, 402', async () => {
    const frugal = (model: string) =>
      postJson({ ...nodeA, key: frugalKey }, '/v1/chat/completions', { model, max_tokens: 20, messages: [{ role: 'user', content: 'Spend a little.' }] });
    // The request's maximum cost on `pricey` (about $0.04) does not fit a daily budget of $0.01.
    const refused = await frugal('chat');
    expect(refused.status).toBe(402);
    expect(refused.json.error.period).toBe('day');
    const downgraded = await frugal('premium');
    expect(downgraded.status).toBe(200);
    expect(downgraded.headers.get('x-switchyard-budget-downgrade')).toBe('premium->cheap');
    expect(downgraded.json.model).toBe('cheap');
    const events = await nodeA.requestEvents(downgraded.headers.get('x-request-id')!);
    expect(events.find((e) => e.type === 'RequestAdmitted')!.data).toMatchObject({ alias: 'cheap' });
    expect(events.find((e) => e.type === 'AttemptFinished')!.data).toMatchObject({ deploymentId: 'thrifty' });
  });

  async function ledgerTotal(): Promise<string> {
    const rows = await nodeA.gateway.platform.database.query<{ total: string }>(
      'SELECT coalesce(sum(cost_usd), 0)::text AS total FROM cost_ledger WHERE tenant_id = $1', [tenant]);
    return rows[0].total;
  }

  async function thresholds(): Promise<Array<{ pct: number; period: string }>> {
    const rows = await nodeA.gateway.platform.database.query<{ data: { pct: number; period: string } }>(
      `SELECT data FROM events WHERE event_type = 'BudgetThresholdCrossed' AND stream_id = $1`, [`tenant-${tenant}`]);
    return rows.map((r) => r.data);
  }

  async function alertsDelivered(): Promise<number> {
    const rows = await nodeA.gateway.platform.database.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM events WHERE event_type = 'BudgetAlertDelivered' AND stream_id = $1 AND (data->>'delivered')::boolean`, [`tenant-${tenant}`]);
    return Number(rows[0].n);
  }
});
