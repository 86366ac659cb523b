import { generateKeyPairSync } from 'node:crypto';
import { AdminClient } from '../support/admin-client.js';
import { runCli } from '../support/cli-process.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';
import { createScratchDatabase } from '../support/services.js';

const ADMIN_TOKEN = 'console-data-admin-token-0123456789';
const hello = (model = 'chat') => ({ model, messages: [{ role: 'user', content: 'console data please' }] });

// PostgreSQL when available (the CLI then reads the same store while the gateway runs), PGlite otherwise.
const databaseUrl = process.env.DATABASE_URL ?? null;

/** Issue 38's data endpoints: request search and the overview, over a gateway that served real traffic. */
describe('console data: GET /admin/v1/requests and GET /admin/v1/overview', () => {
  let gw: TestGateway;
  let admin: AdminClient;
  let scratch: { url: string; drop: () => Promise<void> } | null = null;
  const ids: Record<'ok1' | 'ok2' | 'solo' | 'failed' | 'refused', string> = { ok1: '', ok2: '', solo: '', failed: '', refused: '' };

  const settle = async () => {
    await gw.gateway.platform.committer.drain();
    await gw.gateway.platform.runner.catchUp();
  };
  const send = async (name: keyof typeof ids, model: string, status: number) => {
    const response = await postJson(gw, '/v1/chat/completions', hello(model));
    expect(response.status).toBe(status);
    ids[name] = response.headers.get('x-request-id')!;
  };

  beforeAll(async () => {
    scratch = databaseUrl ? await createScratchDatabase(databaseUrl) : null;
    process.env.CONSOLE_DATA_AUDIT_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    gw = await startTestGateway({
      databaseUrl: scratch?.url ?? null,
      // A checkpoint signed at every page of the chain: several to list.
      environment: { adminToken: ADMIN_TOKEN, audit: { signingKeyRef: 'env:CONSOLE_DATA_AUDIT_KEY', checkpointIntervalMs: 0 } },
    });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
    await send('ok1', 'chat', 200);
    await send('solo', 'solo', 200);
    // Both deployments answer 503 once each: the request fails over and fails.
    gw.mock.addScenario({ model: 'model-primary', times: 1, behaviour: { status: 503 } });
    gw.mock.addScenario({ model: 'model-backup', times: 1, behaviour: { status: 503 } });
    await send('failed', 'chat', 503);
    await send('ok2', 'chat', 200);
    await settle();
    // A daily budget far below today's spend, enforced: the next request is refused (402) and recorded as rejected.
    expect((await admin.put('/tenants/acme/budget', { dailyUsd: '0.000001', softPct: 50, enforcement: 'hard' })).status).toBe(200);
    await send('refused', 'chat', 402);
    await settle();
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    await scratch?.drop();
  });

  test('bad input first: limits, statuses, times, a forged token and unknown parameters are 400 in the admin envelope; no token is 401', async () => {
    for (const query of ['limit=0', 'limit=201', 'limit=ten', 'status=broken', 'from=yesterday', 'tenant=%20x', 'bogus=1']) {
      const response = await admin.get(`/requests?${query}`);
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('validation_failed');
    }
    const range = await admin.get('/requests?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z');
    expect(range.status).toBe(400);
    expect(range.json.error.code).toBe('invalid_range');
    const forged = await admin.get(`/requests?pageToken=${Buffer.from('2026-01-01T00:00:00.000000Z|nope|x').toString('base64url')}`);
    expect(forged.status).toBe(400);
    expect(forged.json.error.code).toBe('invalid_page_token');
    expect((await admin.withToken(null).get('/requests')).status).toBe(401);
    expect((await admin.withToken(null).get('/overview')).status).toBe(401);
    expect((await admin.get('/overview?window=5')).status).toBe(400);
    expect((await admin.get('/overview?window=901')).status).toBe(400);
  });

  test('newest first, one row per request with how it ended, its attempts, tokens and cost', async () => {
    const page = await admin.get('/requests');
    expect(page.status).toBe(200);
    expect(page.json.nextPageToken).toBeNull();
    const listed = page.json.requests;
    expect(listed.map((r: { requestId: string }) => r.requestId)).toEqual([ids.refused, ids.ok2, ids.failed, ids.solo, ids.ok1]);
    const byId = new Map(listed.map((r: { requestId: string }) => [r.requestId, r]));
    const story = (await admin.get(`/requests/${ids.ok1}`)).json;
    expect(byId.get(ids.ok1)).toEqual({
      requestId: ids.ok1, at: story.admission.at, tenantId: 'acme', keyId: 'acme-app', alias: 'chat', operation: 'chat', status: 'success',
      httpStatus: 200, errorCode: null, cacheHit: false, attempts: 1, latencyMs: story.completion.totals.latencyMs,
      inputTokens: story.completion.totals.usage.input, outputTokens: story.completion.totals.usage.output, costUsd: story.billing.costUsd,
    });
    expect(byId.get(ids.failed)).toMatchObject({ status: 'failed', httpStatus: 503, attempts: 2, costUsd: '0.000000000000' });
    expect(byId.get(ids.refused)).toMatchObject({ status: 'rejected', httpStatus: 402, errorCode: 'budget_exceeded', attempts: 0, latencyMs: null, tenantId: 'acme' });
    expect(byId.get(ids.solo)).toMatchObject({ alias: 'solo', status: 'success' });
  });

  test('filters by tenant, key, alias, status and time; pages of 2 join up exactly', async () => {
    const only = async (query: string) => (await admin.get(`/requests?${query}`)).json.requests.map((r: { requestId: string }) => r.requestId);
    expect(await only('status=failed')).toEqual([ids.failed]);
    expect(await only('status=rejected')).toEqual([ids.refused]);
    expect(await only('alias=solo')).toEqual([ids.solo]);
    expect(await only('tenant=acme&key=acme-app&alias=chat&status=success')).toEqual([ids.ok2, ids.ok1]);
    expect(await only('key=someone-else')).toEqual([]);
    // Empty parameters, as a form sends them, are absent ones.
    expect(await only('tenant=&status=&alias=')).toHaveLength(5);
    const at = (await admin.get(`/requests/${ids.failed}`)).json.admission.at;
    expect(await only(`from=${encodeURIComponent(at)}`)).toEqual([ids.refused, ids.ok2, ids.failed]);
    expect(await only(`to=${encodeURIComponent(at)}`)).toEqual([ids.solo, ids.ok1]);
    const seen: string[] = [];
    let token: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const page: { requests: Array<{ requestId: string }>; nextPageToken: string | null } = (await admin.get(`/requests?limit=2${token ? `&pageToken=${token}` : ''}`)).json;
      expect(page.requests.length).toBeLessThanOrEqual(2);
      seen.push(...page.requests.map((r) => r.requestId));
      token = page.nextPageToken;
      if (!token) break;
    }
    expect(seen).toEqual([ids.refused, ids.ok2, ids.failed, ids.solo, ids.ok1]);
  });

  test('the overview: the window\'s rate, errors by class and latency, spend today, breakers, projections caught up, the tenant over its budget', async () => {
    const response = await admin.get('/overview?window=600');
    expect(response.status).toBe(200);
    const overview = response.json;
    expect(overview.window).toEqual({ seconds: 600 });
    expect(overview.requestsPerSecond).toBe(Math.round((5 / 600) * 100) / 100);
    expect(overview.errorsByClass).toEqual({ budget_exceeded: 1, [(await admin.get(`/requests/${ids.failed}`)).json.completion.errorCode]: 1 });
    const latencies = (await admin.get('/requests?status=success')).json.requests.map((r: { latencyMs: number }) => r.latencyMs).sort((a: number, b: number) => a - b);
    expect(overview.latencyMs.p50).toBeGreaterThanOrEqual(latencies[0]);
    expect(overview.latencyMs.p95).toBeGreaterThanOrEqual(overview.latencyMs.p50);
    const spent = (await admin.get('/tenants/acme')).json.spend.day.spentUsd;
    expect(Number(overview.spend.todayUsd)).toBeCloseTo(Number(spent), 6);
    expect(Number(overview.spend.todayUsd)).toBeGreaterThan(0);
    expect(overview.spend.yesterdayUsd).toBe('0.000000');
    // The backup deployment answered 503 once: one failure does not open a breaker.
    expect(overview.breakers).toEqual(expect.arrayContaining([{ deploymentId: 'primary', state: 'closed' }, { deploymentId: 'backup', state: 'closed' }]));
    expect(overview.projections).toEqual(expect.arrayContaining([
      { name: 'request-summaries', lagEvents: 0, lagSeconds: 0, status: 'ok' },
      { name: 'cost-ledger', lagEvents: 0, lagSeconds: 0, status: 'ok' },
    ]));
    expect(overview.budgetAlerts).toEqual([{ tenantId: 'acme', period: 'day', spentUsd: expect.any(String), limitUsd: '0.000001', ratio: expect.any(Number) }]);
    expect(overview.budgetAlerts[0].ratio).toBeGreaterThan(1);
    expect((await admin.get('/overview')).json.window).toEqual({ seconds: 60 });
  });

  test('audit checkpoints: newest first in keyset pages, the first one the latest; bad paging is 400', async () => {
    for (const query of ['limit=0', 'limit=201', 'limit=x', 'before=-1', 'before=abc']) {
      const response = await admin.get(`/audit/checkpoints?${query}`);
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('validation_failed');
    }
    const everything = (await admin.get('/audit/checkpoints?limit=200')).json;
    expect(everything.nextBefore).toBeNull();
    expect(everything.data.length).toBeGreaterThan(2);
    const sequences = everything.data.map((c: { sequence: number }) => c.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => b - a));
    expect(everything.data[0]).toEqual((await admin.get('/audit/checkpoint')).json);
    expect(everything.data[0]).toMatchObject({ algorithm: 'ed25519', signature: expect.any(String), globalPosition: expect.any(Number) });
    const seen: number[] = [];
    let before: number | null = null;
    for (let pages = 0; pages < 50; pages++) {
      const page: { data: Array<{ sequence: number }>; nextBefore: number | null } = (await admin.get(`/audit/checkpoints?limit=2${before !== null ? `&before=${before}` : ''}`)).json;
      seen.push(...page.data.map((c) => c.sequence));
      before = page.nextBefore;
      if (before === null) break;
    }
    expect(seen).toEqual(sequences);
  });

  (databaseUrl ? test : test.skip)('switchyard requests list prints the same page from the store, with its next token', async () => {
    const env = { ...process.env, DATABASE_URL: scratch!.url, CLICKHOUSE_URL: '', LOG_LEVEL: 'error' };
    const first = await runCli(['requests', 'list', '--tenant', 'acme', '--limit', '2'], env);
    expect(first.code).toBe(0);
    const lines = first.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((r) => r.requestId)).toEqual([ids.refused, ids.ok2]);
    const token = /next: --page-token (\S+)/.exec(first.stderr)![1];
    const second = await runCli(['requests', 'list', '--tenant', 'acme', '--limit', '2', '--page-token', token], env);
    expect(second.stdout.trim().split('\n').map((line) => JSON.parse(line).requestId)).toEqual([ids.failed, ids.solo]);
    const failed = await runCli(['requests', 'list', '--status', 'failed'], env);
    expect(JSON.parse(failed.stdout.trim()).requestId).toBe(ids.failed);
    expect(failed.stderr).toContain('next: none (the last page)');
    const wrong = await runCli(['requests', 'list', '--status', 'broken'], env);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--status must be one of success, failed, cancelled, rejected, incomplete');
  }, 30_000);
});
