import { AdminClient, waitUntil } from '../support/admin-client.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';

const ADMIN_TOKEN = 'analytics-api-admin-token-0123456789';
const HOUR = 3_600_000;

describe('GET /admin/v1/analytics/spend without ClickHouse: the PostgreSQL ledger answers', () => {
  let gw: TestGateway;
  let admin: AdminClient;
  let day: { from: string; to: string };
  let hour: { from: string; to: string };

  beforeAll(async () => {
    gw = await startTestGateway({ environment: { adminToken: ADMIN_TOKEN } });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
    gw.mock.addScenario({ model: 'model-primary', times: 2, behaviour: { status: 503 } });
    for (let i = 0; i < 6; i++) {
      expect((await postJson(gw, '/v1/chat/completions', { model: 'chat', stream: i % 2 === 1, messages: [{ role: 'user', content: `spend ${i}` }] })).status).toBe(200);
    }
    await gw.gateway.platform.committer.drain();
    await gw.gateway.platform.runner.catchUp(['cost-ledger']);
    const [bounds] = await gw.gateway.platform.database.query<{ first: Date; last: Date }>(`SELECT min(recorded_at) AS first, max(recorded_at) AS last FROM cost_ledger`);
    const floorHour = (at: Date) => Math.floor(new Date(at).getTime() / HOUR) * HOUR;
    hour = { from: new Date(floorHour(bounds.first)).toISOString(), to: new Date(floorHour(bounds.last) + HOUR).toISOString() };
    const firstDay = new Date(bounds.first).toISOString().slice(0, 10);
    day = { from: `${firstDay}T00:00:00.000Z`, to: new Date(Date.parse(`${firstDay}T00:00:00Z`) + 2 * 86_400_000).toISOString() };
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });

  test('totals and groups equal the ledger; failed-over requests count once per deployment that billed them', async () => {
    const response = await admin.get(`/analytics/spend?from=${day.from}&to=${day.to}&groupBy=deployment`);
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ source: 'postgres', granularity: 'day', groupBy: ['deployment'], filters: {} });
    expect(response.json.fallback).toBeUndefined();
    const ledger = await gw.gateway.platform.database.query<{ deployment_id: string; cost: string; attempts: number; requests: number; output: string }>(
      `SELECT deployment_id, sum(cost_usd)::text AS cost, count(*)::int AS attempts, count(DISTINCT request_id)::int AS requests, sum(output_tokens)::text AS output
       FROM cost_ledger GROUP BY 1 ORDER BY 1`,
    );
    expect(response.json.rows.map((r: any) => [r.deployment, r.costUsd, r.attempts, r.requests, r.outputTokens]))
      .toEqual(ledger.map((l) => [l.deployment_id, l.cost, l.attempts, l.requests, Number(l.output)]));
    expect(response.json.rows.map((r: any) => r.deployment)).toEqual(['backup', 'primary']);
    expect(response.json.totals.requests).toBe(6);
    const [total] = await gw.gateway.platform.database.query<{ cost: string }>(`SELECT sum(cost_usd)::text AS cost FROM cost_ledger`);
    expect(response.json.totals.costUsd).toBe(total.cost);
    // By the hour, the same money in finer buckets.
    const hourly = await admin.get(`/analytics/spend?from=${hour.from}&to=${hour.to}&granularity=hour`);
    expect(hourly.json.totals).toEqual(response.json.totals);
    expect(hourly.json.rows[0].period).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00Z$/);
  });

  test('filters narrow the answer; a filter that matches nothing answers zeros', async () => {
    const backup = await admin.get(`/analytics/spend?from=${day.from}&to=${day.to}&groupBy=model&deployment=backup`);
    expect(backup.json.rows.map((r: any) => r.model)).toEqual(['model-backup']);
    const nobody = await admin.get(`/analytics/spend?from=${day.from}&to=${day.to}&tenant=nobody`);
    expect(nobody.json.rows).toEqual([]);
    expect(nobody.json.totals).toMatchObject({ requests: 0, attempts: 0, costUsd: '0.000000000000' });
  });

  test('CSV by Accept header or format=csv', async () => {
    const byHeader = await admin.get(`/analytics/spend?from=${day.from}&to=${day.to}&groupBy=tenant,model`, { accept: 'text/csv' });
    expect(byHeader.status).toBe(200);
    expect(byHeader.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(byHeader.headers.get('content-disposition')).toMatch(/^attachment; filename="spend-day-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = byHeader.text.trim().split('\r\n');
    expect(lines[0]).toBe('period,tenant,model,requests,attempts,input_tokens,cached_input_tokens,cache_write_tokens,output_tokens,reasoning_tokens,cost_usd,cache_hits,saved_usd');
    expect(lines.slice(1).every((line) => line.startsWith(day.from.slice(0, 10)))).toBe(true);
    expect((await admin.get(`/analytics/spend?from=${day.from}&to=${day.to}&groupBy=tenant,model&format=csv`)).text).toBe(byHeader.text);
  });

  test('without from and to: the current calendar month so far (UTC), and the answer says so', async () => {
    const now = new Date();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const nextMidnight = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
    const answer = await admin.get('/analytics/spend?granularity=month&groupBy=deployment');
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ from: monthStart, to: nextMidnight, range: 'current-month', granularity: 'month' });
    expect(answer.headers.get('x-switchyard-analytics-range')).toBe(`${monthStart}/${nextMidnight}; current-month`);
    expect(answer.json.rows.map((r: any) => [r.period, r.deployment])).toEqual([[monthStart.slice(0, 7), 'backup'], [monthStart.slice(0, 7), 'primary']]);
    const [ledger] = await gw.gateway.platform.database.query<{ cost: string; attempts: number }>(
      `SELECT sum(cost_usd)::text AS cost, count(*)::int AS attempts FROM cost_ledger WHERE recorded_at >= $1`, [monthStart]);
    expect(answer.json.totals).toMatchObject({ costUsd: ledger.cost, attempts: ledger.attempts, requests: 6 });
    // By week: ISO weeks labelled by their Monday; the first one is counted from the 1st of the month.
    const weekly = await admin.get('/analytics/spend?granularity=week');
    expect(weekly.json).toMatchObject({ from: monthStart, range: 'current-month', granularity: 'week' });
    expect(weekly.json.totals).toEqual(answer.json.totals);
    const monday = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - ((now.getUTCDay() + 6) % 7)));
    expect(weekly.json.rows.map((r: any) => r.period)).toEqual([monday.toISOString().slice(0, 10)]);
    // An explicit range says so too; CSV carries the range in its header, not in the body.
    const explicit = await admin.get(`/analytics/spend?from=${day.from}&to=${day.to}`);
    expect(explicit.json.range).toBe('requested');
    const csv = await admin.get('/analytics/spend?granularity=week&format=csv');
    expect(csv.headers.get('x-switchyard-analytics-range')).toMatch(/; current-month$/);
    expect(csv.text.split('\r\n')[0]).toMatch(/^period,requests,/);
  });

  test('week and month over aligned ranges hold the same money as days', async () => {
    const at = new Date(day.from);
    const monday = new Date(at.getTime() - ((at.getUTCDay() + 6) % 7) * 86_400_000);
    const weeks = { from: monday.toISOString(), to: new Date(monday.getTime() + 14 * 86_400_000).toISOString() };
    const months = { from: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)).toISOString(), to: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 2, 1)).toISOString() };
    const daily = await admin.get(`/analytics/spend?from=${day.from}&to=${day.to}&groupBy=deployment`);
    for (const [granularity, range] of [['week', weeks], ['month', months]] as const) {
      const answer = await admin.get(`/analytics/spend?from=${range.from}&to=${range.to}&granularity=${granularity}&groupBy=deployment`);
      expect([granularity, answer.status]).toEqual([granularity, 200]);
      expect(answer.json.totals).toEqual(daily.json.totals);
      expect(answer.json.rows[0].period).toBe(granularity === 'week' ? monday.toISOString().slice(0, 10) : months.from.slice(0, 7));
    }
  });

  test('source=clickhouse without CLICKHOUSE_URL is a clear 400', async () => {
    const response = await admin.get(`/analytics/spend?from=${day.from}&to=${day.to}&source=clickhouse`);
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('clickhouse_not_configured');
  });

  test('bad queries get 400 in the admin envelope and say what to fix', async () => {
    const cases: Array<[string, string, RegExp?]> = [
      [`to=${day.to}`, 'invalid_range', /from is missing/],
      [`from=${day.from}`, 'invalid_range', /to is missing/],
      [`from=2025-03-04T00:00:00Z&to=2025-03-10T00:00:00Z&granularity=week`, 'unaligned_range', /^from must be on a Monday's midnight \(UTC\) for granularity=week\.$/],
      [`from=2025-03-03T00:00:00Z&to=2025-03-11T00:00:00Z&granularity=week`, 'unaligned_range', /^to must be on a Monday's midnight/],
      [`from=2025-03-02T00:00:00Z&to=2025-04-01T00:00:00Z&granularity=month`, 'unaligned_range', /^from must be on the first day of a month at midnight \(UTC\) for granularity=month\.$/],
      [`from=2025-03-01T00:00:00Z&to=2025-04-01T01:00:00Z&granularity=month`, 'unaligned_range', /^to must be on the first day/],
      [`from=2025-03-01T00:00:00Z&to=2025-03-01T00:00:00Z&granularity=month`, 'invalid_range'],
      [`granularity=year`, 'validation_failed', /granularity/],
      [`from=${day.from}&to=${day.to}&granularity=minute`, 'validation_failed', /granularity/],
      [`from=${day.from}&to=${day.to}&groupBy=tenant,planet`, 'validation_failed', /groupBy/],
      [`from=${day.from}&to=${day.to}&currency=eur`, 'validation_failed', /currency: unknown parameter/],
      [`from=2025-03-01T10:30:00Z&to=2025-03-01T12:00:00Z&granularity=hour`, 'unaligned_range', /whole hour/],
      [`from=2025-03-01T10:00:00Z&to=2025-03-02T00:00:00Z`, 'unaligned_range', /midnight/],
      [`from=${day.to}&to=${day.from}`, 'invalid_range'],
      [`from=2020-01-01T00:00:00Z&to=2025-01-01T00:00:00Z&granularity=hour`, 'range_too_large'],
      [`from=tomorrow&to=${day.to}`, 'validation_failed'],
    ];
    for (const [query, code, message] of cases) {
      const response = await admin.get(`/analytics/spend?${query}`);
      expect([query, response.status, response.json?.error?.code]).toEqual([query, 400, code]);
      if (message) expect(response.json.error.message).toMatch(message);
      // Range problems name the parameter to fix, as validation problems do.
      if (code === 'unaligned_range' || code === 'invalid_range') expect(response.json.error.fields).toEqual([{ path: expect.stringMatching(/^(from|to)$/), message: response.json.error.message }]);
    }
    const unaligned = await admin.get('/analytics/spend?from=2025-03-04T00:00:00Z&to=2025-03-10T00:00:00Z&granularity=week');
    expect(unaligned.json.error.fields[0].path).toBe('from');
    expect((await admin.withToken(null).get(`/analytics/spend?from=${day.from}&to=${day.to}`)).status).toBe(401);
  });
});

describe('GET /admin/v1/analytics/spend with ClickHouse configured but unreachable', () => {
  let gw: TestGateway;
  let admin: AdminClient;

  beforeAll(async () => {
    // Port 1 on loopback: nothing listens, connections are refused at once. The gateway must still serve.
    gw = await startTestGateway({ environment: { adminToken: ADMIN_TOKEN, clickhouseUrl: 'http://127.0.0.1:1/switchyard' } });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
    expect((await postJson(gw, '/v1/chat/completions', { model: 'chat', messages: [{ role: 'user', content: 'degraded' }] })).status).toBe(200);
    await gw.gateway.platform.committer.drain();
    await gw.gateway.platform.runner.catchUp(['cost-ledger']);
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });

  test('auto answers from PostgreSQL and says why; asking for ClickHouse is 503', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const range = `from=${today}T00:00:00Z&to=${new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString()}`;
    const auto = await admin.get(`/analytics/spend?${range}`);
    expect(auto.status).toBe(200);
    expect(auto.json.source).toBe('postgres');
    expect(auto.json.fallback).toEqual(expect.any(String));
    expect(auto.json.totals.attempts).toBe(1);
    const forced = await admin.get(`/analytics/spend?${range}&source=clickhouse`);
    expect(forced.status).toBe(503);
    expect(forced.json.error.code).toBe('analytics_unavailable');
    // The projection reports its failure instead of hiding it.
    await waitUntil(async () => Boolean(gw.gateway.platform.runner.status().find((s) => s.name === 'clickhouse-analytics')?.lastError), 10_000, 'the analytics projection to report ClickHouse down');
  });
});
