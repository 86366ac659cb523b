import { randomBytes } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { AdminClient, waitUntil } from '../support/admin-client.js';
import { type TestGateway, postJson, sseData, startTestGateway } from '../support/gateway-harness.js';
import { createScratchDatabase, requireService } from '../support/services.js';
import { testPort } from '../support/port-range.js';

/**
 * Issue 10 item 6: the exact cache against real PostgreSQL (events, ledger) and Redis (the cache). Two
 * tenants share the alias `chat`; `uncached` opts out in its definition. The mock answers the same
 * words every time, so whether the provider was called is read from the calls it counts, and tool-call
 * ids (`call_mock_<n>`, one per provider call) tell a cached answer from a fresh one.
 */
const databaseBase = requireService('DATABASE_URL');
const redisUrl = requireService('REDIS_URL');
const suite = databaseBase && redisUrl ? describe : describe.skip;

const ADMIN_TOKEN = 'exact-cache-admin-token-0123456789';
const GLOBEX_ENV = `SY_TEST_CACHE_GLOBEX_${process.pid}_KEY`;

const yaml = (mockUrl: string, keyEnv: string) => `
providers:
  - id: mock-upstream
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true
    apiKey: env:SY_TEST_UPSTREAM_KEY
deployments:
  - id: primary
    provider: mock-upstream
    model: model-primary
    capabilities: [chat, streaming, tools, json_object, json_schema]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "2.50", outputPer1M: "10.00" }
contentPolicies:
  - id: tokenized-mail
    input: { email: tokenize }
aliases:
  - name: chat
    routes:
      - { deployment: primary, priority: 0 }
  - name: private
    contentPolicy: tokenized-mail
    routes:
      - { deployment: primary, priority: 0 }
  - name: uncached
    routes:
      - { deployment: primary, priority: 0 }
    policy: { cache: false }
tenants:
  - id: acme
  - id: globex
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference]
  - id: globex-app
    tenant: globex
    key: env:${GLOBEX_ENV}
    scopes: [inference]
`;

const weather = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

suite('exact cache (Redis + PostgreSQL)', () => {
  let gw: TestGateway;
  let admin: AdminClient;
  let globexKey: string;
  let drop: () => Promise<void>;
  let nonce = 0;
  const namespace = `sy-test-cache-${randomBytes(6).toString('hex')}`;

  /** A request no earlier test sent (the cache is keyed by the normalized request). */
  const fresh = (extra: Record<string, unknown> = {}) => ({
    model: 'chat', messages: [{ role: 'user', content: `cache question ${process.pid}-${++nonce}` }], ...extra,
  });
  const calls = () => gw.mock.requests().length;
  const as = (key: string) => ({ authorization: `Bearer ${key}` });

  beforeAll(async () => {
    const scratch = await createScratchDatabase(databaseBase!);
    drop = scratch.drop;
    globexKey = generateApiKey();
    process.env[GLOBEX_ENV] = globexKey;
    gw = await startTestGateway({
      databaseUrl: scratch.url,
      yaml,
      environment: { redisUrl, adminToken: ADMIN_TOKEN, cache: { namespace } },
    });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
  }, 60_000);

  afterAll(async () => {
    await admin?.delete('/cache');
    await gw?.close();
    await drop?.();
  });

  beforeEach(() => gw.mock.clearScenarios());

  async function rejectionOf(requestId: string) {
    await waitUntil(async () => (await gw.requestEvents(requestId)).length > 0, 5_000, 'the refusal is recorded');
    return gw.requestEvents(requestId);
  }

  test('a repeat is served from the cache: no provider call, the same answer, a request of its own', async () => {
    const body = fresh();
    const before = calls();
    const first = await postJson(gw, '/v1/chat/completions', body);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-switchyard-cache')).toBe('miss');
    const second = await postJson(gw, '/v1/chat/completions', body);
    expect(second.status).toBe(200);
    expect(second.headers.get('x-switchyard-cache')).toBe('hit');
    expect(calls()).toBe(before + 1);
    expect(second.json.choices).toEqual(first.json.choices);
    expect(second.json.usage).toEqual(first.json.usage);
    expect(second.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    const events = await gw.requestEvents(second.headers.get('x-request-id')!);
    expect(events.map((e) => e.type)).toEqual(['RequestAdmitted', 'RequestServedFromCache', 'RequestCompleted']);
    expect(events[2].data).toMatchObject({ status: 'success', cacheHit: true, totals: { attempts: 0 } });
    expect(new Decimal((events[2].data as { totals: { costUsd: string } }).totals.costUsd).isZero()).toBe(true);
    expect(JSON.stringify(events.map((e) => e.data))).not.toContain('Switchyard routes'); // the answer itself never enters the log
  });

  test('an alias whose content policy tokenizes is never cached: the answer has the protected values back, and Redis would hold them in clear', async () => {
    const email = `ada.${process.pid}.${++nonce}@example.com`;
    const body = { model: 'private', messages: [{ role: 'user', content: `Write to ${email} today.` }] };
    gw.mock.addScenario({ behaviour: { echo: true } });
    const before = calls();
    for (let i = 0; i < 2; i++) {
      const answer = await postJson(gw, '/v1/chat/completions', body);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-switchyard-cache')).toBe('bypass');
      expect(answer.json.choices[0].message.content).toContain(email);
    }
    expect(calls()).toBe(before + 2);
    // Nothing under the suite's namespace holds the address (the same request to a plain alias is stored, as above).
    const redis = new Redis(redisUrl!);
    try {
      const keys = await redis.keys(`*${namespace}*`);
      expect(keys.length).toBeGreaterThan(0); // the test before stored its answer there
      for (const key of keys) expect((await redis.dumpBuffer(key))?.toString('latin1') ?? '').not.toContain(email);
    } finally {
      redis.disconnect();
    }
  });

  test('a buffered answer serves a stream (and the official openai SDK reads it), and a streamed answer serves a buffered request', async () => {
    const body = fresh({ tools: [weather], tool_choice: 'required' });
    const buffered = await postJson(gw, '/v1/chat/completions', body);
    expect(buffered.headers.get('x-switchyard-cache')).toBe('miss');
    const callId = buffered.json.choices[0].message.tool_calls[0].id;
    const before = calls();

    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'chat', messages: body.messages as any, tools: [weather], tool_choice: 'required', stream: true, stream_options: { include_usage: true } })
      .withResponse();
    expect(response.headers.get('x-switchyard-cache')).toBe('hit');
    let args = '';
    let id: string | undefined;
    let finish: string | null = null;
    let usage: unknown = null;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      for (const call of delta?.tool_calls ?? []) {
        id ??= call.id;
        args += call.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(id).toBe(callId);
    expect(JSON.parse(args)).toEqual(JSON.parse(buffered.json.choices[0].message.tool_calls[0].function.arguments));
    expect(finish).toBe('tool_calls');
    expect(usage).toEqual(buffered.json.usage);
    expect(calls()).toBe(before);

    const streamedFirst = fresh();
    const live = await postJson(gw, '/v1/chat/completions', { ...streamedFirst, stream: true });
    expect(live.headers.get('x-switchyard-cache')).toBe('miss');
    const liveText = sseData(live.text).filter((d) => d !== '[DONE]').map((d) => JSON.parse(d).choices[0]?.delta?.content ?? '').join('');
    const afterStream = calls();
    const repeat = await postJson(gw, '/v1/chat/completions', streamedFirst);
    expect(repeat.headers.get('x-switchyard-cache')).toBe('hit');
    expect(repeat.json.choices[0].message.content).toBe(liveText);
    expect(calls()).toBe(afterStream);
  });

  test('tenants never see each other\'s entries', async () => {
    const body = fresh();
    expect((await postJson(gw, '/v1/chat/completions', body)).headers.get('x-switchyard-cache')).toBe('miss');
    const before = calls();
    const other = await postJson(gw, '/v1/chat/completions', body, as(globexKey));
    expect(other.status).toBe(200);
    expect(other.headers.get('x-switchyard-cache')).toBe('miss');
    expect(calls()).toBe(before + 1);
    expect((await postJson(gw, '/v1/chat/completions', body, as(globexKey))).headers.get('x-switchyard-cache')).toBe('hit');
  });

  test('a hit is in the ledger with zero cost and the saving, and tenant spend keeps the saving', async () => {
    const body = fresh();
    const first = await postJson(gw, '/v1/chat/completions', body, as(globexKey));
    const hits = [await postJson(gw, '/v1/chat/completions', body, as(globexKey)), await postJson(gw, '/v1/chat/completions', body, as(globexKey))];
    expect(hits.map((h) => h.headers.get('x-switchyard-cache'))).toEqual(['hit', 'hit']);
    await gw.gateway.platform.committer.drain();
    await gw.gateway.platform.runner.catchUp(['cost-ledger']);
    const db = gw.gateway.platform.database;
    const [original] = await db.query<{ cost_usd: string; attempt: number }>(
      `SELECT cost_usd::text, attempt FROM cost_ledger WHERE request_id = $1`, [first.headers.get('x-request-id')]);
    expect(new Decimal(original.cost_usd).gt(0)).toBe(true);
    const rows = await db.query<{ attempt: number; outcome: string; cost_usd: string; saved_usd: string; tenant_id: string; output_tokens: string }>(
      `SELECT attempt, outcome, cost_usd::text, saved_usd::text, tenant_id, output_tokens FROM cost_ledger WHERE request_id = ANY($1::text[])`,
      [hits.map((h) => h.headers.get('x-request-id'))]);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row).toMatchObject({ attempt: 0, outcome: 'cache_hit', tenant_id: 'globex', output_tokens: '0' }); // bigint: decimal text
      expect(new Decimal(row.cost_usd).isZero()).toBe(true);
      expect(new Decimal(row.saved_usd).eq(original.cost_usd)).toBe(true);
    }
    // Spend is the ledger's cost (hits add nothing), the saving the ledger's saved_usd, in every period.
    const spend = await db.query<{ period: string; spent_usd: string; saved_usd: string }>(
      `SELECT period, spent_usd::text, saved_usd::text FROM tenant_spend WHERE tenant_id = 'globex'`);
    const [ledger] = await db.query<{ cost: string; saved: string }>(
      `SELECT sum(cost_usd)::text AS cost, sum(saved_usd)::text AS saved FROM cost_ledger WHERE tenant_id = 'globex'`);
    expect(spend.map((s) => s.period).sort()).toEqual(['day', 'month']);
    for (const period of spend) {
      expect(new Decimal(period.spent_usd).eq(ledger.cost)).toBe(true);
      expect(new Decimal(period.saved_usd).eq(ledger.saved)).toBe(true);
    }
    expect(new Decimal(ledger.saved).gte(new Decimal(original.cost_usd).times(2))).toBe(true);
    // A rebuild from position zero reproduces the hit rows and the saving exactly.
    const snapshot = () => db.query<Record<string, string>>(
      `SELECT request_id, attempt, outcome, cost_usd::text, saved_usd::text FROM cost_ledger WHERE tenant_id = 'globex' ORDER BY request_id, attempt`);
    const spendSnapshot = () => db.query(`SELECT period, spent_usd::text, saved_usd::text FROM tenant_spend WHERE tenant_id = 'globex' ORDER BY period`);
    const [beforeRows, beforeSpend] = [await snapshot(), await spendSnapshot()];
    await gw.gateway.platform.runner.rebuild('cost-ledger');
    expect(await snapshot()).toEqual(beforeRows);
    expect(await spendSnapshot()).toEqual(beforeSpend);
    const tenant = await admin.get('/tenants/globex');
    expect(new Decimal(tenant.json.spend.month.savedUsd).eq(ledger.saved)).toBe(true);
    expect(new Decimal(tenant.json.spend.month.spentUsd).eq(ledger.cost)).toBe(true);
    const history = await admin.get(`/requests/${hits[0].headers.get('x-request-id')}`);
    expect(history.json.cacheHit).toMatchObject({ sourceRequestId: first.headers.get('x-request-id'), savedCostUsd: expect.any(String) });
  });

  test('a new alias version never serves the old version\'s entries', async () => {
    const body = fresh();
    await postJson(gw, '/v1/chat/completions', body);
    expect((await postJson(gw, '/v1/chat/completions', body)).headers.get('x-switchyard-cache')).toBe('hit');
    const routing = gw.gateway.platform.routing;
    const old = routing.current.aliases.get('chat')!.version;
    const published = await admin.put('/aliases/chat', { routes: [{ deployment: 'primary', priority: 0, weight: 2 }] });
    expect(published.status).toBe(200);
    expect(published.json.appended).toEqual(['AliasPublished']);
    await waitUntil(async () => routing.current.aliases.get('chat')!.version !== old, 5_000, 'the new alias version to serve');
    const version = routing.current.aliases.get('chat')!.version;
    expect(version).toBeGreaterThan(old);
    const before = calls();
    const after = await postJson(gw, '/v1/chat/completions', body);
    expect(after.headers.get('x-switchyard-cache')).toBe('miss');
    expect(calls()).toBe(before + 1);
    const events = await gw.requestEvents(after.headers.get('x-request-id')!);
    expect(events[0].data).toMatchObject({ aliasVersion: version });

    // The opt-out through the admin API, and back.
    const optOut = await admin.put('/aliases/chat', { routes: [{ deployment: 'primary', priority: 0, weight: 2 }], policy: { cache: false } });
    expect(optOut.json.appended).toEqual(['AliasPublished']);
    await waitUntil(async () => routing.current.aliases.get('chat')!.policy.cache === false, 5_000, 'the opt-out to serve');
    expect((await postJson(gw, '/v1/chat/completions', body)).headers.get('x-switchyard-cache')).toBe('bypass');
    await admin.put('/aliases/chat', { routes: [{ deployment: 'primary', priority: 0, weight: 2 }] });
    await waitUntil(async () => routing.current.aliases.get('chat')!.policy.cache === undefined, 5_000, 'the cache to serve again');
    expect((await postJson(gw, '/v1/chat/completions', body)).headers.get('x-switchyard-cache')).toBe('miss');
  });

  test('cache-control: no-cache and an alias that opts out bypass it; errors and truncated answers are never stored', async () => {
    const body = fresh();
    await postJson(gw, '/v1/chat/completions', body);
    let before = calls();
    const bypassed = await postJson(gw, '/v1/chat/completions', body, { 'cache-control': 'no-cache' });
    expect(bypassed.headers.get('x-switchyard-cache')).toBe('bypass');
    expect(calls()).toBe(before + 1);

    const optedOut = { ...fresh(), model: 'uncached' };
    for (let i = 0; i < 2; i++) expect((await postJson(gw, '/v1/chat/completions', optedOut)).headers.get('x-switchyard-cache')).toBe('bypass');
    expect(calls()).toBe(before + 3);

    const truncated = fresh({ max_tokens: 3 });
    const cut = await postJson(gw, '/v1/chat/completions', truncated);
    expect(cut.json.choices[0].finish_reason).toBe('length');
    before = calls();
    expect((await postJson(gw, '/v1/chat/completions', truncated)).headers.get('x-switchyard-cache')).toBe('miss');
    expect(calls()).toBe(before + 1);

    const failing = fresh();
    gw.mock.addScenario({ model: 'model-primary', times: 3, behaviour: { status: 500 } });
    const failed = await postJson(gw, '/v1/chat/completions', failing);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(failed.headers.get('x-switchyard-cache')).toBe('miss'); // errors say what the cache decided, too
    gw.mock.clearScenarios();
    const retried = await postJson(gw, '/v1/chat/completions', failing);
    expect(retried.status).toBe(200);
    expect(retried.headers.get('x-switchyard-cache')).toBe('miss');
  });

  test('a hit needs no route: served while the alias\'s only deployment is disabled, where a miss gets 503 and a RequestRejected', async () => {
    const body = fresh();
    expect((await postJson(gw, '/v1/chat/completions', body)).headers.get('x-switchyard-cache')).toBe('miss');
    expect((await admin.post('/deployments/primary/disable', { reason: 'maintenance' })).status).toBeLessThan(300);
    try {
      const before = calls();
      const hit = await postJson(gw, '/v1/chat/completions', body);
      expect(hit.status).toBe(200);
      expect(hit.headers.get('x-switchyard-cache')).toBe('hit');
      const miss = await postJson(gw, '/v1/chat/completions', fresh());
      expect(miss.status).toBe(503);
      expect(miss.headers.get('x-switchyard-cache')).toBe('miss');
      expect(miss.json.error.message).not.toContain('primary'); // the 503 never names deployments
      expect(calls()).toBe(before);
      // A refusal is answered at once; its event is group-committed right behind it.
      const refused = await rejectionOf(miss.headers.get('x-request-id')!);
      expect(refused.map((e) => e.type)).toEqual(['RequestRejected']);
      expect(refused[0].data).toMatchObject({ status: 503, code: miss.json.error.code, tenantId: 'acme', keyId: 'acme-app', alias: 'chat', operation: 'chat' });
    } finally {
      expect((await admin.post('/deployments/primary/enable', {})).status).toBeLessThan(300);
    }
  });

  test('a hit costs nothing but is still refused (402) once a hard budget is spent', async () => {
    const body = fresh();
    const asGlobex = { ...gw, key: globexKey };
    expect((await postJson(asGlobex, '/v1/chat/completions', body)).headers.get('x-switchyard-cache')).toBe('miss');
    const hit = await postJson(asGlobex, '/v1/chat/completions', body);
    expect(hit.headers.get('x-switchyard-cache')).toBe('hit');
    // Far below what the first request cost: the budget is spent.
    expect((await admin.put('/tenants/globex/budget', { monthlyUsd: '0.000001', enforcement: 'hard' })).status).toBeLessThan(300);
    try {
      await waitUntil(async () => (await postJson(asGlobex, '/v1/chat/completions', body)).status === 402, 5_000, 'the budget applies');
      const refused = await postJson(asGlobex, '/v1/chat/completions', body);
      expect(refused.status).toBe(402);
      expect(refused.headers.get('x-switchyard-cache')).toBe('hit');
      expect(refused.json.error).toMatchObject({ code: 'budget_exceeded', scope: 'tenant:globex' });
      // A hit reserves nothing: it is refused only because spend passed the budget, and says so.
      expect(refused.json.error.message).toMatch(/^The monthly budget of tenant 'globex' is exhausted: \$[\d.]+ of \$0\.000001 spent, \$0 reserved by requests in flight\. It resets at .+ \(tenants\[globex\]\.budget\.monthlyUsd\)\.$/);
      const events = await rejectionOf(refused.headers.get('x-request-id')!);
      expect(events.map((e) => e.type)).toEqual(['RequestRejected']);
      expect(events[0].data).toMatchObject({ status: 402, code: 'budget_exceeded', scope: 'tenant:globex', tenantId: 'globex' });
    } finally {
      expect((await admin.put('/tenants/globex/budget', { monthlyUsd: '1000', enforcement: 'soft' })).status).toBeLessThan(300);
    }
  });

  test('purge by tenant, by alias and by age through the admin API', async () => {
    const body = fresh();
    await postJson(gw, '/v1/chat/completions', body);
    await postJson(gw, '/v1/chat/completions', body, as(globexKey));

    const invalid = await admin.delete('/cache?olderThan=yesterday');
    expect(invalid.status).toBe(400);
    expect(invalid.json.error.fields[0].path).toBe('olderThan');
    expect((await admin.withToken(null).delete('/cache')).status).toBe(401);
    expect((await postJson(gw, '/v1/chat/completions', body)).headers.get('x-switchyard-cache')).toBe('hit');

    const young = await admin.delete('/cache?olderThan=1h');
    expect(young.status).toBe(200);
    expect(young.json.purged).toBe(0);

    const acme = await admin.delete('/cache?tenant=acme');
    expect(acme.json.purged).toBeGreaterThanOrEqual(1);
    expect((await postJson(gw, '/v1/chat/completions', body)).headers.get('x-switchyard-cache')).toBe('miss');
    expect((await postJson(gw, '/v1/chat/completions', body, as(globexKey))).headers.get('x-switchyard-cache')).toBe('hit');

    expect((await admin.delete('/cache?alias=uncached')).json.purged).toBe(0);
    expect((await admin.delete('/cache?tenant=globex&alias=chat')).json.purged).toBeGreaterThanOrEqual(1);
    expect((await postJson(gw, '/v1/chat/completions', body, as(globexKey))).headers.get('x-switchyard-cache')).toBe('miss');

    await new Promise((r) => setTimeout(r, 1_100));
    expect((await admin.delete('/cache?olderThan=1s')).json.purged).toBeGreaterThanOrEqual(2);
    expect((await postJson(gw, '/v1/chat/completions', body)).headers.get('x-switchyard-cache')).toBe('miss');
  });
});

describe('exact cache in memory (no Redis)', () => {
  let gw: TestGateway;
  let drop: (() => Promise<void>) | undefined;
  /** A scratch PostgreSQL database when there is one (PGlite otherwise): it starts much faster. */
  const database = async () => {
    if (!databaseBase) return null;
    const scratch = await createScratchDatabase(databaseBase);
    drop = scratch.drop;
    return scratch.url;
  };

  afterEach(async () => {
    await gw?.close();
    await drop?.();
  });

  test('entries expire after SWITCHYARD_CACHE_TTL_SECONDS', async () => {
    gw = await startTestGateway({ databaseUrl: await database(), environment: { cache: { exactCacheTtlMs: 1_000 } } });
    const body = { model: 'solo', messages: [{ role: 'user', content: 'ttl' }] };
    expect((await postJson(gw, '/v1/chat/completions', body)).headers.get('x-switchyard-cache')).toBe('miss');
    expect((await postJson(gw, '/v1/chat/completions', body)).headers.get('x-switchyard-cache')).toBe('hit');
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await postJson(gw, '/v1/chat/completions', body)).headers.get('x-switchyard-cache')).toBe('miss');
    expect(gw.mock.requests()).toHaveLength(2);
  });

  test('an unreachable Redis is a miss, never a failed request (and idempotency steps aside)', async () => {
    // Nothing listens on this port of the suite's range: every cache and idempotency command fails at once.
    gw = await startTestGateway({ databaseUrl: await database(), environment: { redisUrl: `redis://127.0.0.1:${testPort(1299)}`, cache: {} } });
    const body = { model: 'solo', messages: [{ role: 'user', content: 'no redis' }] };
    for (let i = 0; i < 2; i++) {
      const answer = await postJson(gw, '/v1/chat/completions', body, { 'idempotency-key': 'no-redis' });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-switchyard-cache')).toBe('miss');
      expect(answer.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(gw.mock.requests()).toHaveLength(2);
  });

  test('under the strict profile a hit continues the stream RequestAdmitted was committed in', async () => {
    gw = await startTestGateway({ databaseUrl: await database(), environment: { durability: 'strict', cache: {} } });
    const body = { model: 'solo', messages: [{ role: 'user', content: 'strict' }] };
    await postJson(gw, '/v1/chat/completions', body);
    const hit = await postJson(gw, '/v1/chat/completions', { ...body, stream: true });
    expect(hit.headers.get('x-switchyard-cache')).toBe('hit');
    expect(sseData(hit.text).at(-1)).toBe('[DONE]');
    const events = await gw.requestEvents(hit.headers.get('x-request-id')!);
    expect(events.map((e) => [e.type, e.streamVersion])).toEqual([['RequestAdmitted', 1], ['RequestServedFromCache', 2], ['RequestCompleted', 3]]);
    expect(gw.mock.requests()).toHaveLength(1);
  });

  test('SWITCHYARD_CACHE=off bypasses it on the whole node', async () => {
    gw = await startTestGateway({ databaseUrl: await database(), environment: { cache: { exactCacheEnabled: false } } });
    const body = { model: 'solo', messages: [{ role: 'user', content: 'off' }] };
    for (let i = 0; i < 2; i++) expect((await postJson(gw, '/v1/chat/completions', body)).headers.get('x-switchyard-cache')).toBe('bypass');
    expect(gw.mock.requests()).toHaveLength(2);
  });
});
