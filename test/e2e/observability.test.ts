import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type TestGateway, defaultYaml, postJson, sseData, startTestGateway } from '../support/gateway-harness.js';
import { openApiPath, registeredRoutes } from '../support/registered-routes.js';

const ADMIN_TOKEN = 'sy-admin-observability-test-token-0123456789';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

/** Collects request log lines (JSON, one per request). */
class LogLines {
  readonly lines: Array<Record<string, any>> = [];
  raw = '';
  write(line: string): void {
    this.raw += line;
    for (const part of line.split('\n').filter(Boolean)) this.lines.push(JSON.parse(part));
  }
  async forRequest(requestId: string): Promise<Record<string, any>> {
    for (let waited = 0; waited < 5_000; waited += 20) {
      const found = this.lines.find((line) => line.requestId === requestId);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no log line for request ${requestId}`);
  }
}

async function scrape(gw: TestGateway, token: string | null = ADMIN_TOKEN): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(`${gw.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

/** The value of one series, or null when it is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[3]);
  }
  return null;
}

const ask = (model: string, content = 'Hello there', extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content }], ...extra });

describe('observability: metrics, traces and request logs', () => {
  let gw: TestGateway;
  const spans = new InMemorySpanExporter();
  const log = new LogLines();

  beforeAll(async () => {
    gw = await startTestGateway({
      environment: { adminToken: ADMIN_TOKEN, logLevel: 'log', observability: { spanExporter: spans, requestLogDestination: log, metricsAccess: 'admin', requestLog: true } },
    });
  });
  afterAll(async () => {
    await gw?.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
    spans.reset();
  });

  test('/metrics needs the admin token by default and answers in the Prometheus text format', async () => {
    const anonymous = await scrape(gw, null);
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.text).error.code).toBe('unauthorized');
    expect(anonymous.text).not.toContain('gen_ai_');
    const wrong = await scrape(gw, 'sy-admin-not-the-token-0000000000000000');
    expect(wrong.status).toBe(401);
    // A gateway key without the admin scope is not an admin credential either.
    expect((await scrape(gw, gw.key)).status).toBe(403);
    const scraped = await scrape(gw);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toContain('text/plain');
    for (const name of [
      'gen_ai_client_operation_duration_seconds', 'gen_ai_client_token_usage', 'gen_ai_server_time_to_first_token_seconds',
      'switchyard_requests_total', 'switchyard_gateway_overhead_seconds', 'switchyard_cost_usd_total', 'switchyard_breaker_state',
      'switchyard_rate_limit_refusals_total', 'switchyard_fallbacks_total', 'switchyard_request_errors_total', 'switchyard_in_flight_requests',
      'switchyard_in_flight_streams', 'switchyard_reserved_tokens', 'switchyard_projection_lag_events', 'switchyard_group_commit_batch_events',
      'switchyard_group_commit_duration_seconds', 'switchyard_event_spool_bytes', 'switchyard_cache_hits_total',
    ]) expect(scraped.text).toContain(`# TYPE ${name} `);
    expect(sample(scraped.text, 'switchyard_event_spool_bytes')).toBe(0);
  });

  test('the Grafana dashboard in ops/grafana loads, and every metric its panels query is exported', async () => {
    const dashboard = JSON.parse(readFileSync(fileURLToPath(new URL('../../../ops/grafana/switchyard.json', import.meta.url)), 'utf8'));
    expect(dashboard.uid).toBe('switchyard-gateway');
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(15);
    const exported = (await scrape(gw)).text;
    const queried = new Set<string>();
    for (const panel of dashboard.panels) {
      expect(panel.targets.length).toBeGreaterThan(0);
      for (const target of panel.targets) {
        // Label names (in `by (…)` and `{…}`) are not metrics.
        const expr = String(target.expr).replace(/\b(?:by|without)\s*\([^)]*\)/g, '').replace(/\{[^}]*\}/g, '');
        const names = [...expr.matchAll(/\b(?:gen_ai|switchyard)_[a-z0-9_]+/g)].map((m) => m[0]);
        expect(names.length).toBeGreaterThan(0);
        for (const name of names) queried.add(name.replace(/_(bucket|sum|count)$/, ''));
      }
    }
    const missing = [...queried].filter((name) => !exported.includes(`# TYPE ${name} `));
    expect(missing).toEqual([]);
    expect(queried.size).toBeGreaterThanOrEqual(20);
  });

  test('the committed OpenAPI document (docs/openapi.json, served at /docs) lists exactly the routes the gateway registers', async () => {
    const committed = JSON.parse(readFileSync(fileURLToPath(new URL('../../../docs/openapi.json', import.meta.url)), 'utf8'));
    const served = await fetch(`${gw.url}/docs`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toContain('application/json');
    const document: any = await served.json();
    expect(document).toEqual(committed);
    expect(document.openapi).toBe('3.1.0');
    // Every route of every controller, from Nest's own metadata.
    const registered = new Set<string>();
    for (const { method, pattern } of registeredRoutes(gw.gateway.app)) registered.add(`${method.toLowerCase()} ${openApiPath(pattern)}`);
    const documented = new Set(Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations as object).map((method) => `${method} ${path}`)));
    expect([...registered].filter((route) => !documented.has(route)).sort()).toEqual([]);
    expect([...documented].filter((route) => !registered.has(route)).sort()).toEqual([]);
    expect(registered.size).toBeGreaterThanOrEqual(40);
    const page = await fetch(`${gw.url}/docs/index.html`);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('<code>/v1/chat/completions</code>');
  });

  test('a success, a fallback, a stream and a refusal show up in the metrics with bounded labels only', async () => {
    const before = await scrape(gw);
    const count = (text: string, name: string, labels: Record<string, string>) => sample(text, name, labels) ?? 0;

    const ok = await postJson(gw, '/v1/chat/completions', ask('solo', 'first question'));
    expect(ok.status).toBe(200);
    gw.mock.addScenario({ model: 'model-primary', behaviour: { status: 500 }, times: 1 });
    const fallback = await postJson(gw, '/v1/chat/completions', ask('chat', 'second question'));
    expect(fallback.status).toBe(200);
    const stream = await postJson(gw, '/v1/chat/completions', ask('solo', 'third question', { stream: true }));
    expect(stream.status).toBe(200);
    const refused = await postJson(gw, '/v1/chat/completions', ask('solo'), { authorization: 'Bearer sk-sy-notakeynotakeynotakeynotakey12' });
    expect(refused.status).toBe(401);

    const after = await scrape(gw);
    const delta = (name: string, labels: Record<string, string>) => count(after.text, name, labels) - count(before.text, name, labels);
    expect(delta('switchyard_requests_total', { operation: 'chat', alias: 'solo', status_class: '2xx' })).toBe(2);
    expect(delta('switchyard_requests_total', { operation: 'chat', alias: 'chat', status_class: '2xx' })).toBe(1);
    // A refused request never resolved an alias: its label is empty, never the text the client sent.
    expect(delta('switchyard_requests_total', { operation: 'chat', alias: '', status_class: '4xx' })).toBe(1);
    expect(delta('switchyard_request_errors_total', { error_class: 'invalid_api_key', status_class: '4xx' })).toBe(1);
    expect(delta('switchyard_fallbacks_total', { alias: 'chat', deployment: 'backup' })).toBe(1);
    expect(delta('switchyard_attempt_errors_total', { deployment: 'primary', error_class: 'transient' })).toBe(1);
    expect(delta('gen_ai_client_operation_duration_seconds_count', { gen_ai_operation_name: 'chat', deployment: 'primary', error_type: 'transient' })).toBe(1);
    expect(delta('gen_ai_client_operation_duration_seconds_count', { deployment: 'backup', error_type: '' })).toBe(1);
    expect(delta('gen_ai_client_token_usage_count', { gen_ai_token_type: 'input', deployment: 'primary', gen_ai_provider_name: 'openai-compatible' })).toBe(2);
    expect(delta('gen_ai_client_token_usage_count', { gen_ai_token_type: 'output', deployment: 'backup' })).toBe(1);
    expect(delta('gen_ai_client_token_usage_sum', { gen_ai_token_type: 'output', deployment: 'backup' })).toBeGreaterThan(0);
    expect(delta('gen_ai_server_time_to_first_token_seconds_count', { alias: 'solo', deployment: 'primary' })).toBe(1);
    expect(delta('switchyard_cost_usd_total', { alias: 'solo', deployment: 'primary' })).toBeGreaterThan(0);
    expect(delta('switchyard_group_commit_batch_events_count', {})).toBeGreaterThanOrEqual(3);
    expect(sample(after.text, 'switchyard_breaker_state', { deployment: 'primary' })).toBe(0);
    expect(sample(after.text, 'switchyard_in_flight_requests')).toBe(0);
    expect(sample(after.text, 'switchyard_reserved_tokens')).toBe(0);
    expect(sample(after.text, 'switchyard_projection_lag_events', { projection: 'routing-snapshot' })).not.toBeNull();
    // Never a key, a tenant id or content.
    expect(after.text).not.toContain(gw.key);
    expect(after.text).not.toContain('sk-sy-');
    expect(after.text).not.toContain('acme');
    expect(after.text).not.toContain('question');
  });

  test('every response carries x-switchyard-overhead-ms, refusals and health probes included', async () => {
    const ok = await postJson(gw, '/v1/chat/completions', ask('solo'));
    const refused = await postJson(gw, '/v1/chat/completions', ask('solo'), { authorization: 'Bearer nope' });
    const health = await fetch(`${gw.url}/healthz`);
    const unknown = await fetch(`${gw.url}/nowhere`);
    for (const headers of [ok.headers, refused.headers, health.headers, unknown.headers]) {
      const value = headers.get('x-switchyard-overhead-ms');
      expect(value).not.toBeNull();
      expect(Number(value)).toBeGreaterThanOrEqual(0);
    }
    // The provider's time is not the gateway's: a slow upstream does not inflate the overhead.
    gw.mock.addScenario({ model: 'model-primary', behaviour: { latencyMs: 400 }, times: 1 });
    const slow = await postJson(gw, '/v1/chat/completions', ask('solo'));
    expect(slow.status).toBe(200);
    expect(Number(slow.headers.get('x-switchyard-overhead-ms'))).toBeLessThan(400);
  });

  test('a fallback is one server span with a client span per attempt, GenAI attributes, and the caller trace reaches the upstream', async () => {
    gw.mock.addScenario({ model: 'model-primary', behaviour: { status: 500 }, times: 1 });
    const response = await postJson(gw, '/v1/chat/completions', ask('chat'), { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    await log.forRequest(requestId); // the observation has ended: every span is exported
    const finished = spans.getFinishedSpans();
    const server = finished.find((span) => span.attributes['switchyard.request_id'] === requestId)!;
    expect(server).toBeDefined();
    expect(server.spanContext().traceId).toBe(TRACE_ID);
    expect(server.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(server.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'chat', 'http.response.status_code': 200 });
    const attempts = finished
      .filter((span: ReadableSpan) => span.parentSpanContext?.spanId === server.spanContext().spanId)
      .sort((a, b) => Number(a.attributes['switchyard.attempt']) - Number(b.attributes['switchyard.attempt']));
    expect(attempts).toHaveLength(2);
    expect(attempts.map((span) => span.name)).toEqual(['chat model-primary', 'chat model-backup']);
    expect(attempts[0].attributes).toMatchObject({
      'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai-compatible', 'gen_ai.request.model': 'model-primary',
      'switchyard.deployment': 'primary', 'switchyard.outcome': 'failed', 'error.type': 'transient',
    });
    expect(attempts[1].attributes).toMatchObject({ 'gen_ai.response.model': 'model-backup', 'switchyard.outcome': 'success' });
    expect(attempts[1].attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(attempts[1].attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    expect(attempts.every((span) => span.spanContext().traceId === TRACE_ID)).toBe(true);
    // Each upstream call carried its own attempt span as the parent, in the caller's trace.
    const calls = gw.mock.requests().filter((call) => call.path.endsWith('/chat/completions'));
    expect(calls.map((call) => call.headers.traceparent)).toEqual(attempts.map((span) => `00-${TRACE_ID}-${span.spanContext().spanId}-01`));
    // No span per chunk: a stream is still two spans.
    spans.reset();
    const streamed = await postJson(gw, '/v1/chat/completions', ask('solo', 'stream me', { stream: true }));
    await log.forRequest(streamed.headers.get('x-request-id')!);
    expect(spans.getFinishedSpans()).toHaveLength(2);
  });

  test('a request without traceparent starts its own trace, still propagated', async () => {
    const response = await postJson(gw, '/v1/chat/completions', ask('solo'));
    await log.forRequest(response.headers.get('x-request-id')!);
    const [call] = gw.mock.requests();
    expect(call.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(call.headers.traceparent).not.toContain(TRACE_ID);
  });

  test('one log line per request, refusals included, with ids and numbers but no content or key', async () => {
    const ok = await postJson(gw, '/v1/chat/completions', ask('solo', 'a secret plan about zebras'));
    gw.mock.addScenario({ model: 'model-primary', behaviour: { status: 500 }, times: 1 });
    const fallback = await postJson(gw, '/v1/chat/completions', ask('chat', 'zebras again'));
    const refused = await postJson(gw, '/v1/chat/completions', ask('solo'), { authorization: 'Bearer sk-sy-wrongwrongwrongwrongwrongwrong12' });
    const invalid = await postJson(gw, '/v1/chat/completions', { model: 'solo', messages: 'not-a-list' });

    const success = await log.forRequest(ok.headers.get('x-request-id')!);
    expect(success).toMatchObject({
      msg: 'request', level: 'info', method: 'POST', path: '/v1/chat/completions', operation: 'chat', status: 200, errorClass: null,
      tenantId: 'acme', keyId: 'acme-app', alias: 'solo', deployment: 'primary', provider: 'openai-compatible', attempts: 1, fallbackDepth: 0, stream: false,
    });
    expect(success.tokens.input).toBeGreaterThan(0);
    expect(success.tokens.output).toBeGreaterThan(0);
    expect(Number(success.costUsd)).toBeGreaterThan(0);
    expect(success.latencyMs).toBeGreaterThanOrEqual(0);
    expect(typeof success.overheadMs).toBe('number');
    expect(success.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(typeof success.time).toBe('string');
    expect(success.content).toBeUndefined();

    expect(await log.forRequest(fallback.headers.get('x-request-id')!)).toMatchObject({ status: 200, alias: 'chat', deployment: 'backup', attempts: 2, fallbackDepth: 1 });
    expect(await log.forRequest(refused.headers.get('x-request-id')!)).toMatchObject({
      status: 401, level: 'warn', errorClass: 'invalid_api_key', tenantId: null, keyId: null, alias: null, attempts: 0, tokens: null,
    });
    expect(await log.forRequest(invalid.headers.get('x-request-id')!)).toMatchObject({ status: 400, tenantId: 'acme', keyId: 'acme-app', errorClass: 'invalid_request' });
    expect(log.raw).not.toContain('zebras');
    expect(log.raw).not.toContain(gw.key);
    expect(log.raw).not.toContain('sk-sy-wrong');
    expect(log.raw).not.toContain('upstream-secret-value');
  });
});

describe('observability: open metrics, rate-limit scopes and opt-in content logging', () => {
  let gw: TestGateway;
  const log = new LogLines();

  beforeAll(async () => {
    gw = await startTestGateway({
      yaml: (mockUrl, keyEnv) => defaultYaml(mockUrl, keyEnv).replace('scopes: [inference, models:read]', 'scopes: [inference, models:read]\n    limits: { maxConcurrency: 1 }'),
      environment: { logLevel: 'log', observability: { metricsAccess: 'open', requestLogDestination: log, requestLog: true, contentLogTenants: new Set(['acme']) } },
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  test('SWITCHYARD_METRICS_ACCESS=open serves /metrics without a credential', async () => {
    const scraped = await scrape(gw, null);
    expect(scraped.status).toBe(200);
    expect(scraped.text).toContain('# TYPE switchyard_requests_total counter');
  });

  test('429s are counted by the scope the refusal names', async () => {
    gw.mock.addScenario({ model: 'model-primary', behaviour: { latencyMs: 600 }, times: 1 });
    const slow = postJson(gw, '/v1/chat/completions', ask('solo'));
    await new Promise((resolve) => setTimeout(resolve, 150));
    const refused = await postJson(gw, '/v1/chat/completions', ask('solo'));
    expect(refused.status).toBe(429);
    expect((await slow).status).toBe(200);
    const scraped = await scrape(gw, null);
    expect(sample(scraped.text, 'switchyard_rate_limit_refusals_total', { scope: 'key.maxConcurrency' })).toBe(1);
    expect(await log.forRequest(refused.headers.get('x-request-id')!)).toMatchObject({ status: 429, errorClass: 'rate_limited', keyId: 'acme-app' });
  });

  test('an opted-in tenant gets its prompt and completion logged, with personal data and keys redacted', async () => {
    const prompt = 'Mail jane.doe@example.com or call +44 20 7946 0958, card 4111 1111 1111 1111, SSN 078-05-1120, key sk-proj-abcdefghijklmnop1234';
    const response = await postJson(gw, '/v1/chat/completions', ask('solo', prompt));
    expect(response.status).toBe(200);
    const line = await log.forRequest(response.headers.get('x-request-id')!);
    expect(line.content.prompt).toContain('user: Mail [email] or call [phone], card [card], SSN [national-id], key [redacted]');
    expect(typeof line.content.completion).toBe('string');
    expect(line.content.completion.length).toBeGreaterThan(0);
    for (const secret of ['jane.doe', '7946', '4111', '078-05', 'sk-proj']) expect(log.raw).not.toContain(secret);
  });

  test('a streamed answer of an opted-in tenant is logged too, once, from the text relayed', async () => {
    const response = await postJson(gw, '/v1/chat/completions', ask('solo', 'stream to bob@example.org', { stream: true }));
    expect(response.status).toBe(200);
    const line = await log.forRequest(response.headers.get('x-request-id')!);
    expect(line.stream).toBe(true);
    expect(line.content.prompt).toBe('user: stream to [email]');
    const relayed = sseData(response.text).filter((data) => data !== '[DONE]').map((data) => JSON.parse(data).choices?.[0]?.delta?.content ?? '').join('');
    expect(relayed.length).toBeGreaterThan(0);
    expect(line.content.completion).toBe(relayed.replace(/\s+/g, ' ').trim());
  });
});
