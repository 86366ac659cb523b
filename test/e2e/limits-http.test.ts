import { generateApiKey } from '../../modules/access/index.js';
import { type TestGateway, defaultYaml, postJson, startTestGateway } from '../support/gateway-harness.js';
import { AdminClient, waitUntil } from '../support/admin-client.js';

const ADMIN_TOKEN = 'limits-http-admin-token-0123456789';

/**
 * Rate limits and budgets as a client sees them, in each client format (one node, in-process
 * counters): the refusal is the format's own error envelope with retry-after and the scope, and
 * answers carry OpenAI's rate-limit headers.
 */
describe('rate limits and budgets over HTTP', () => {
  let gw: TestGateway;
  const brokeKey = generateApiKey();
  process.env.SY_TEST_LIMITS_BROKE_KEY = brokeKey;
  /** The default configuration, the key limited to 3 requests a minute, and a second tenant with a tiny daily budget. */
  const yaml = (mockUrl: string, keyEnv: string) =>
    defaultYaml(mockUrl, keyEnv)
      .replace('    scopes: [inference, models:read]', '    scopes: [inference, models:read]\n    limits: { rpm: 3, tpm: 100000 }')
      .replace('tenants:\n  - id: acme\n', 'tenants:\n  - id: acme\n  - id: broke\n    budget: { dailyUsd: "0.00015" }\n') +
    '  - id: broke-app\n    tenant: broke\n    key: env:SY_TEST_LIMITS_BROKE_KEY\n';

  beforeAll(async () => {
    gw = await startTestGateway({ yaml, environment: { adminToken: ADMIN_TOKEN } });
  }, 60_000);
  afterAll(() => gw?.close());

  /** A refusal is answered at once; its RequestRejected is group-committed right behind it. */
  async function rejectionOf(requestId: string) {
    await waitUntil(async () => (await gw.requestEvents(requestId)).length > 0, 5_000, 'the refusal is recorded');
    return gw.requestEvents(requestId);
  }

  const body = { model: 'solo', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] };
  const openai = (key = gw.key) => postJson({ ...gw, key }, '/v1/chat/completions', body);
  const anthropic = (key = gw.key) => postJson({ ...gw, key }, '/v1/messages', body, { 'anthropic-version': '2023-06-01' });

  test('answers carry the headers; over the request limit, 429 in each format with retry-after and the scope', async () => {
    const first = await openai();
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-requests')).toBe('3');
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('2');
    expect(first.headers.get('x-ratelimit-limit-tokens')).toBe('100000');
    expect(first.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+(\.\d)?s|1m0s)$/);
    expect((await anthropic()).status).toBe(200);
    expect((await openai()).status).toBe(200);

    const limited = await anthropic();
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: expect.stringContaining("Rate limit reached for API key 'acme-app': 3 requests per minute") } });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    // One instant behind all three: retry-after-ms exactly, reset rounded up to the tenth, retry-after to the second.
    const retryMs = Number(limited.headers.get('retry-after-ms'));
    // OpenAI's duration: whole minutes written as such ("1m0s" when the refusal came at the window's very start).
    const tenths = Math.ceil(retryMs / 100);
    const minutes = Math.floor(tenths / 600);
    const inSeconds = `${(tenths - minutes * 600) / 10}s`;
    expect(limited.headers.get('x-ratelimit-reset-requests')).toBe(retryMs < 1000 ? `${retryMs}ms` : minutes > 0 ? `${minutes}m${inSeconds}` : inSeconds);
    expect(limited.headers.get('retry-after')).toBe(String(Math.max(1, Math.ceil(retryMs / 1000))));
    const limitedOpenAi = await openai();
    expect(limitedOpenAi.status).toBe(429);
    expect(limitedOpenAi.json.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited', scope: 'key:acme-app', limit_type: 'requests' });

    // Each refusal is in the log: one RequestRejected, nothing dispatched, nothing billed.
    for (const refusal of [limited, limitedOpenAi]) {
      const events = await rejectionOf(refusal.headers.get('x-request-id')!);
      expect(events.map((e) => e.type)).toEqual(['RequestRejected']);
      expect(events[0].data).toEqual({
        requestId: refusal.headers.get('x-request-id'),
        reason: expect.stringContaining("Rate limit reached for API key 'acme-app'"),
        status: 429, code: 'rate_limited', tenantId: 'acme', keyId: 'acme-app', alias: 'solo', operation: 'chat', scope: 'key:acme-app',
      });
      expect(events[0].metadata).toMatchObject({ actor: 'key:acme-app', correlationId: refusal.headers.get('x-request-id') });
    }
    const history = await new AdminClient(gw.url, ADMIN_TOKEN).get(`/requests/${limitedOpenAi.headers.get('x-request-id')}`);
    expect(history.json).toMatchObject({ status: 'rejected', admission: null, attempts: [], rejection: { status: 429, scope: 'key:acme-app' }, billing: { ledgerRows: 0 } });
  });

  test('an alias published through the admin API with policy.limits is limited over every caller, naming the alias', async () => {
    const admin = new AdminClient(gw.url, ADMIN_TOKEN);
    const published = await admin.put('/aliases/scarce', { routes: [{ deployment: 'primary' }], policy: { limits: { rpm: 1 } } });
    expect(published.status).toBe(201);
    expect(published.json.policy.limits).toEqual({ rpm: 1 });
    // Two callers without limits of their own share the alias's one request a minute.
    const keys = await Promise.all([1, 2].map(async () => (await admin.post('/keys', { tenant: 'acme', aliases: ['scarce'] })).json.key as string));
    const ask = (key: string) => postJson({ ...gw, key }, '/v1/chat/completions', { ...body, model: 'scarce' });
    expect((await ask(keys[0])).status).toBe(200);
    const limited = await ask(keys[1]);
    expect(limited.status).toBe(429);
    expect(limited.json.error).toMatchObject({ code: 'rate_limited', scope: 'alias:scarce', limit_type: 'requests' });
    expect((await admin.put('/aliases/scarce', { routes: [{ deployment: 'primary' }], policy: { limits: { rpm: 0 } } })).status).toBe(400);
  });

  test('over a hard budget, 402 in each format with the reset time; keys without limits get no rate-limit headers', async () => {
    // $0.00015 a day at 2.50/10.00 per 1M: the first request's reservation (about $0.0001) fits, a second one no longer does.
    const first = await openai(brokeKey);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-requests')).toBeNull();
    const broke = await anthropic(brokeKey);
    expect(broke.status).toBe(402);
    // Not exhausted: what is left of the day's budget is less than this request may cost, and the message says so.
    expect(broke.json).toEqual({ type: 'error', error: { type: 'billing_error', message: expect.stringMatching(/^This request may cost up to \$0\.0000\d+ \(8 output tokens and \d+ input tokens at the price of the dearest route, solo#1\); \$0\.0000\d+ of the daily \$0\.00015 budget of tenant 'broke' remains \(\$0\.0000\d+ spent, \$[\d.]+ reserved by requests in flight\)\. Lower max_tokens to reserve less, or raise tenants\[broke\]\.budget\.dailyUsd\. It resets at /) } });
    expect(broke.json.error.message).not.toContain('exhausted');
    const brokeOpenAi = await openai(brokeKey);
    expect(brokeOpenAi.status).toBe(402);
    expect(brokeOpenAi.json.error).toMatchObject({ type: 'insufficient_quota', code: 'budget_exceeded', scope: 'tenant:broke', period: 'day', setting: 'tenants[broke].budget.dailyUsd' });
    expect(Date.parse(brokeOpenAi.json.error.resets_at)).toBeGreaterThan(Date.now());
    const rejected = await rejectionOf(brokeOpenAi.headers.get('x-request-id')!);
    expect(rejected.map((e) => [e.type, e.data])).toEqual([['RequestRejected', expect.objectContaining({ status: 402, code: 'budget_exceeded', scope: 'tenant:broke', tenantId: 'broke' })]]);
  });

  test('a new tenant with a $0.0001 monthly budget (issue 34): the reservation is the cause, and the 402 says so, not "exhausted"', async () => {
    const admin = new AdminClient(gw.url, ADMIN_TOKEN);
    expect((await admin.post('/tenants', { id: 'fresh', name: 'Fresh' })).status).toBe(201);
    expect((await admin.put('/tenants/fresh/budget', { monthlyUsd: '0.0001' })).status).toBe(200);
    const issued = await admin.post('/keys', { id: 'fresh-app', tenant: 'fresh' });
    expect(issued.status).toBe(201);
    const freshKey: string = issued.json.key;
    const ask = (extra: Record<string, unknown>) => postJson({ ...gw, key: freshKey }, '/v1/chat/completions', { model: 'solo', messages: [{ role: 'user', content: 'Hi' }], ...extra });
    await waitUntil(async () => (await ask({})).status === 402, 5_000, 'the new key and its tenant\'s budget apply');
    // No max_tokens: 1,024 output tokens are reserved at the dearest route's price (10 USD per 1M): $0.01024 and the input.
    const refused = await ask({});
    expect(refused.json.error.message).toMatch(new RegExp(
      '^This request may cost up to \\$0\\.0102\\d+ \\(1,024 output tokens \\(the default without max_tokens\\) and \\d+ input tokens at the price of the dearest route, solo#1\\); ' +
      "\\$0\\.0001 of the monthly \\$0\\.0001 budget of tenant 'fresh' remains \\(\\$0 spent, \\$0 reserved by requests in flight\\)\\. " +
      'Send max_tokens to reserve less, or raise tenants\\[fresh\\]\\.budget\\.monthlyUsd\\. It resets at \\S+\\.$',
    ));
    expect(refused.json.error).toMatchObject({ code: 'budget_exceeded', scope: 'tenant:fresh', period: 'month', setting: 'tenants[fresh].budget.monthlyUsd' });
    // Following the advice: a small max_tokens reserves less, and fits.
    expect((await ask({ max_tokens: 4 })).status).toBe(200);
  });

  test('a budget webhook at a metadata or (unless allowed) private address is refused by the admin API; nothing changes', async () => {
    const admin = new AdminClient(gw.url, ADMIN_TOKEN);
    // The signing secret resolves, so the refusals below are about the URL alone.
    process.env.SY_TEST_HOOK_KEY = 'limits-http-hook-signing-secret';
    expect((await admin.post('/tenants', { id: 'hooked', name: 'Hooked' })).status).toBe(201);
    const hook = (url: string, extra = {}) => admin.put('/tenants/hooked/budget', { monthlyUsd: '5', webhook: { url, secret: 'env:SY_TEST_HOOK_KEY', ...extra } });
    const metadata = await hook('http://169.254.169.254/latest/meta-data', { allowPrivateNetwork: true });
    expect(metadata.status).toBe(422);
    expect(metadata.json.error).toMatchObject({ code: 'invalid_budget', message: expect.stringContaining('cloud metadata') });
    const loopback = await hook('http://127.0.0.1:21812/budget');
    expect(loopback.status).toBe(422);
    expect(loopback.json.error.message).toContain('allowPrivateNetwork: true on the webhook');
    expect((await admin.get('/tenants/hooked')).json.budget).toBeNull();
    const allowed = await hook('http://127.0.0.1:21812/budget', { allowPrivateNetwork: true });
    expect(allowed.status).toBe(200);
    expect(allowed.json.budget.webhook).toEqual({ url: 'http://127.0.0.1:21812/budget', secret: 'env:SY_TEST_HOOK_KEY', allowPrivateNetwork: true });
  });
});
