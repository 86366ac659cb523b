import pg from 'pg';
import { AdminClient } from '../support/admin-client.js';
import { runCli } from '../support/cli-process.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';
import { createScratchDatabase } from '../support/services.js';

const ADMIN_TOKEN = 'history-suite-admin-token-0123456789';
const hello = (extra: Record<string, unknown> = {}) => ({ model: 'chat', messages: [{ role: 'user', content: 'history please' }], ...extra });

// PostgreSQL when available (the CLI can then read the same store while the gateway runs), PGlite otherwise.
const databaseUrl = process.env.DATABASE_URL ?? null;

describe('history APIs: events by position, one request reconstructed, control-plane changes by actor', () => {
  let gw: TestGateway;
  let admin: AdminClient;
  let scratch: { url: string; drop: () => Promise<void> } | null = null;
  let failedOver: string;
  let streamed: string;

  const cli = (args: string[]) => runCli(args, { ...process.env, DATABASE_URL: scratch!.url, CLICKHOUSE_URL: '', LOG_LEVEL: 'error' });

  beforeAll(async () => {
    scratch = databaseUrl ? await createScratchDatabase(databaseUrl) : null;
    gw = await startTestGateway({ databaseUrl: scratch?.url ?? null, environment: { adminToken: ADMIN_TOKEN } });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
    gw.mock.addScenario({ model: 'model-primary', times: 1, behaviour: { status: 503 } });
    const first = await postJson(gw, '/v1/chat/completions', hello());
    expect(first.status).toBe(200);
    failedOver = first.headers.get('x-request-id')!;
    const second = await postJson(gw, '/v1/chat/completions', hello({ stream: true }));
    expect(second.status).toBe(200);
    streamed = second.headers.get('x-request-id')!;
    expect((await admin.post('/tenants', { id: 'initech' })).status).toBe(201);
    expect((await admin.put('/tenants/initech/budget', { monthlyUsd: '250' })).status).toBe(200);
    await gw.gateway.platform.committer.drain();
    await gw.gateway.platform.runner.catchUp();
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    await scratch?.drop();
  });

  describe('GET /admin/v1/requests/{id}', () => {
    test('a request that failed over: both attempts with deployment, strategy, error, usage and cost; alias and price versions in force; the ledger', async () => {
      const response = await admin.get(`/requests/${failedOver}`);
      expect(response.status).toBe(200);
      const history = response.json;
      expect(history).toMatchObject({ requestId: failedOver, status: 'success' });
      expect(history.admission).toMatchObject({ tenantId: 'acme', keyId: 'acme-app', alias: 'chat', aliasVersion: 1, clientFormat: 'openai', stream: false });
      expect(history.admission.metadata.actor).toBe('key:acme-app');
      expect(history.alias).toMatchObject({
        name: 'chat', version: 1, strategy: 'priority',
        routes: [{ deploymentId: 'primary', priority: 0, weight: 1 }, { deploymentId: 'backup', priority: 1, weight: 1 }],
      });
      expect(history.alias.publishedBy).toMatch(/^config:/);
      expect(history.attempts).toHaveLength(2);
      const [failed, served] = history.attempts;
      expect(failed).toMatchObject({
        attempt: 1, deploymentId: 'primary', model: 'model-primary', strategy: 'priority', outcome: 'failed', errorClass: 'overloaded', httpStatus: 503,
        candidates: ['primary', 'backup'], ledger: null,
        price: { version: 1, inputPer1M: '2.50', outputPer1M: '10.00', cachedInputPer1M: '1.25' },
      });
      expect(failed.cost.total).toBe('0.000000000000');
      expect(served).toMatchObject({
        attempt: 2, deploymentId: 'backup', model: 'model-backup', outcome: 'success', errorClass: null,
        price: { version: 1, inputPer1M: '0.15', outputPer1M: '0.60' },
      });
      expect(served.usage.output).toBeGreaterThan(0);
      expect(Number(served.cost.total)).toBeGreaterThan(0);
      expect(served.ledger).toEqual({ costUsd: served.cost.total, recordedAt: expect.any(String) });
      expect(history.completion).toMatchObject({ status: 'success', fallbackDepth: 1, httpStatus: 200 });
      expect(history.completion.totals.costUsd).toBe(served.cost.total);
      expect(history.billing).toEqual({ ledgerRows: 1, costUsd: served.cost.total });
      // Positions point into the log: admission, then the attempts, then the completion.
      expect(history.admission.globalPosition).toBeLessThan(failed.globalPosition);
      expect(failed.globalPosition).toBeLessThan(served.globalPosition);
      expect(served.globalPosition).toBeLessThan(history.completion.globalPosition);
    });

    test('a streamed request has one attempt with its time to first token', async () => {
      const history = (await admin.get(`/requests/${streamed}`)).json;
      expect(history.admission.stream).toBe(true);
      expect(history.attempts).toHaveLength(1);
      expect(history.attempts[0].ttftMs).toEqual(expect.any(Number));
    });

    test('unknown and malformed ids are 404 in the admin envelope; no token is 401', async () => {
      for (const id of ['01939a4e-0000-7000-8000-000000000000', 'not a request id', '..%2F..%2Fetc']) {
        const response = await admin.get(`/requests/${encodeURIComponent(id)}`);
        expect(response.status).toBe(404);
        expect(response.json.error.code).toBe('request_not_found');
      }
      expect((await admin.withToken(null).get(`/requests/${failedOver}`)).status).toBe(401);
    });
  });

  describe('GET /admin/v1/events', () => {
    test('pages through the whole log in global order; the pages join up exactly', async () => {
      const all = await gw.gateway.platform.database.query<{ p: number }>(`SELECT global_position::int AS p FROM events ORDER BY transaction_id, global_position`);
      const seen: number[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = await admin.get(`/events?limit=7${after ? `&after=${after}` : ''}`);
        expect(page.status).toBe(200);
        seen.push(...page.json.data.map((e: any) => e.globalPosition));
        after = page.json.next;
        if (page.json.caughtUp) break;
      }
      expect(seen).toEqual(all.map((r) => r.p));
      // At the end, the token is where to poll from: nothing new yet.
      expect((await admin.get(`/events?after=${after}`)).json).toMatchObject({ data: [], caughtUp: true });
    });

    test('filters by type and by stream; after= also takes a global position', async () => {
      const typed = await admin.get('/events?type=AttemptFinished,RequestCompleted&limit=1000');
      expect(typed.json.data.length).toBe(5);
      expect(new Set(typed.json.data.map((e: any) => e.type))).toEqual(new Set(['AttemptFinished', 'RequestCompleted']));
      const stream = await admin.get(`/events?stream=request-${failedOver}`);
      expect(stream.json.data.map((e: any) => [e.type, e.streamVersion])).toEqual([
        ['RequestAdmitted', 1], ['AttemptFinished', 2], ['AttemptFinished', 3], ['RequestCompleted', 4],
      ]);
      const admitted = stream.json.data[0].globalPosition;
      const after = await admin.get(`/events?after=${admitted}&stream=request-${failedOver}`);
      expect(after.json.data.map((e: any) => e.streamVersion)).toEqual([2, 3, 4]);
    });

    test('bad input: a forged token, a position with no event, an out-of-range limit, an unknown parameter', async () => {
      const forged = await admin.get(`/events?after=${Buffer.from('1:2:3').toString('base64url')}`);
      expect(forged.status).toBe(400);
      expect(forged.json.error.code).toBe('invalid_page_token');
      const nowhere = await admin.get('/events?after=999999');
      expect(nowhere.status).toBe(400);
      expect(nowhere.json.error.message).toMatch(/no event at global position 999999/);
      for (const query of ['limit=0', 'limit=1001', 'limit=ten', 'type=not%20a%20type', 'stream=%20', 'bogus=1']) {
        const response = await admin.get(`/events?${query}`);
        expect(response.status).toBe(400);
        expect(response.json.error.code).toBe('validation_failed');
      }
      expect((await admin.get('/events?bogus=1')).json.error.message).toMatch(/bogus: unknown parameter/);
    });
  });

  describe('GET /admin/v1/audit', () => {
    test('control-plane changes with their actors, filtered by actor, action and time', async () => {
      const everything = (await admin.get('/audit?limit=1000')).json.data;
      expect(everything.every((change: any) => typeof change.actor === 'string')).toBe(true);
      expect(everything.some((change: any) => change.action === 'AliasPublished' && change.actor.startsWith('config:'))).toBe(true);
      expect(everything.some((change: any) => change.action === 'AttemptFinished')).toBe(false);
      const byAdmin = (await admin.get(`/audit?actor=${encodeURIComponent('admin:env')}`)).json.data;
      expect(byAdmin.map((c: any) => [c.action, c.stream])).toEqual([['TenantCreated', 'tenant-initech'], ['TenantBudgetSet', 'tenant-initech']]);
      expect(byAdmin[1].data).toMatchObject({ budget: { monthlyUsd: '250' } });
      expect(byAdmin[0].correlationId).toEqual(expect.any(String));
      const budgets = (await admin.get('/audit?action=TenantBudgetSet')).json.data;
      expect(budgets.map((c: any) => c.stream)).toEqual(['tenant-initech']);
      const since = byAdmin[0].at;
      const recent = (await admin.get(`/audit?from=${encodeURIComponent(since)}`)).json.data;
      expect(recent.map((c: any) => c.action)).toEqual(['TenantCreated', 'TenantBudgetSet']);
      expect((await admin.get(`/audit?to=${encodeURIComponent(since)}&actor=admin:env`)).json.data).toEqual([]);
    });

    test('bad input: an unknown action, an empty range, a malformed time', async () => {
      const unknown = await admin.get('/audit?action=AttemptFinished');
      expect(unknown.status).toBe(400);
      expect(unknown.json.error.code).toBe('unknown_action');
      const empty = await admin.get('/audit?from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z');
      expect(empty.status).toBe(400);
      expect(empty.json.error.code).toBe('invalid_range');
      expect((await admin.get('/audit?from=yesterday')).status).toBe(400);
    });
  });

  (databaseUrl ? describe : describe.skip)('the same from the CLI (PostgreSQL, while the gateway runs)', () => {
    test('requests show, events list and audit log print what the API answers', async () => {
      const show = await cli(['requests', 'show', failedOver]);
      expect(show.code).toBe(0);
      expect(JSON.parse(show.stdout)).toEqual((await admin.get(`/requests/${failedOver}`)).json);
      const list = await cli(['events', 'list', '--stream', `request-${failedOver}`]);
      expect(list.code).toBe(0);
      expect(list.stdout.trim().split('\n').map((line) => JSON.parse(line).type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'AttemptFinished', 'RequestCompleted']);
      expect(list.stderr).toMatch(/^next: --after \S+ \(end of the log\)/);
      const log = await cli(['audit', 'log', '--actor', 'admin:env']);
      expect(log.code).toBe(0);
      expect(log.stdout.trim().split('\n').map((line) => JSON.parse(line).action)).toEqual(['TenantCreated', 'TenantBudgetSet']);
      const missing = await cli(['requests', 'show', '01939a4e-0000-7000-8000-000000000000']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/No request/);
      const badAction = await cli(['audit', 'log', '--action', 'Nope']);
      expect(badAction.code).toBe(1);
      expect(badAction.stderr).toMatch(/unknown action Nope/);
    }, 60_000);
  });

  // Last: it adds a change of its own, which the listings above do not expect.
  (databaseUrl ? describe : describe.skip)('a transaction open in another database of the server (PostgreSQL)', () => {
    test('holds back neither the projections nor the audit listing: a change is listed as soon as it is applied', async () => {
      const neighbour = new pg.Client({ connectionString: databaseUrl! });
      await neighbour.connect();
      try {
        await neighbour.query('BEGIN');
        await neighbour.query('SELECT pg_current_xact_id()'); // holds a transaction id, as a long batch job does
        expect((await admin.post('/tenants', { id: 'hooli' })).status).toBe(201);
        await gw.gateway.platform.runner.catchUp();
        const created = (await admin.get('/audit?action=TenantCreated')).json.data;
        expect(created.map((c: any) => c.stream)).toContain('tenant-hooli');
        const events = (await admin.get('/events?type=TenantCreated')).json.data;
        expect(events.map((e: any) => e.streamId)).toContain('tenant-hooli');
      } finally {
        await neighbour.query('ROLLBACK').catch(() => undefined);
        await neighbour.end();
      }
    });
  });
});
