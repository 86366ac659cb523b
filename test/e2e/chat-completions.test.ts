import { Decimal } from 'decimal.js';
import type { AttemptFinished, RequestAdmitted, RequestCompleted } from '../../events/request-events.js';
import { type TestGateway, postJson, sseData, startTestGateway } from '../support/gateway-harness.js';
import { canonicalJson } from '../../src/kernel/canonical-json.js';

const REQUEST_EVENTS = ['RequestAdmitted', 'AttemptFinished', 'RequestCompleted', 'RequestRejected'];
const hello = { model: 'chat', messages: [{ role: 'user', content: 'Hello there, gateway!' }] };

describe('POST /v1/chat/completions', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  describe('bad input gets an OpenAI error envelope and appends no request events', () => {
    const cases: Array<[string, () => Promise<{ status: number; json: any; headers: Headers }>, number, string]> = [
      ['malformed JSON', () => postJson(gw, '/v1/chat/completions', '{"model": "chat",'), 400, 'invalid_json'],
      ['unknown key', () => postJson(gw, '/v1/chat/completions', hello, { authorization: 'Bearer sk-sy-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }), 401, 'invalid_api_key'],
      ['missing key', () => postJson(gw, '/v1/chat/completions', hello, { authorization: '' }), 401, 'invalid_api_key'],
      ['unknown alias', () => postJson(gw, '/v1/chat/completions', { ...hello, model: 'gpt-17' }), 404, 'model_not_found'],
      ['a deployment id used as model', () => postJson(gw, '/v1/chat/completions', { ...hello, model: 'primary' }), 404, 'model_not_found'],
      ['body over 4 MiB', () => postJson(gw, '/v1/chat/completions', { ...hello, messages: [{ role: 'user', content: 'x'.repeat(4 * 1024 * 1024 + 10) }] }), 413, 'request_too_large'],
      ['conflicting token limits', () => postJson(gw, '/v1/chat/completions', { ...hello, max_tokens: 10, max_completion_tokens: 20 }), 400, 'invalid_request'],
      ['an unsupported parameter', () => postJson(gw, '/v1/chat/completions', { ...hello, audio_voice: 'alloy' }), 400, 'unsupported_parameter'],
      ['a parameter no route of the alias can honour', () => postJson(gw, '/v1/chat/completions', { ...hello, prompt_cache_key: 'k' }), 400, 'unsupported_parameter'],
      ['empty messages', () => postJson(gw, '/v1/chat/completions', { ...hello, messages: [] }), 400, 'invalid_request'],
    ];
    test.each(cases)('%s', async (_name, send, status, code) => {
      const before = await gw.countEvents(REQUEST_EVENTS);
      const response = await send();
      expect(response.status).toBe(status);
      expect(response.json.error).toMatchObject({ code, type: expect.any(String), message: expect.any(String) });
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(gw.mock.requests()).toHaveLength(0);
      expect(await gw.countEvents(REQUEST_EVENTS)).toBe(before);
    });
  });

  test('a buffered request records admitted, attempt and completion with an exact decimal cost', async () => {
    const response = await postJson(gw, '/v1/chat/completions', hello);
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const events = await gw.requestEvents(requestId);
    expect(events.map((e) => e.type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']);
    const admitted = events[0].data as RequestAdmitted['data'];
    expect(admitted).toMatchObject({ alias: 'chat', aliasVersion: 1, tenantId: 'acme', keyId: 'acme-app', stream: false, clientFormat: 'openai' });
    const attempt = events[1].data as AttemptFinished['data'];
    const usage = response.json.usage;
    expect(attempt).toMatchObject({ outcome: 'success', deploymentId: 'primary', usageEvidence: 'provider', priceVersion: 1 });
    expect(attempt.usage).toEqual({ input: usage.prompt_tokens, cachedInput: 0, cacheWrite: 0, output: 12, reasoning: 0 });
    // Hand-computed: input at $2.50/1M, output at $10.00/1M.
    const expected = new Decimal(usage.prompt_tokens).times('2.50').plus(new Decimal(12).times('10.00')).div(1_000_000);
    expect(attempt.cost.total).toBe(expected.toFixed(12));
    expect((events[2].data as RequestCompleted['data'])).toMatchObject({ status: 'success', httpStatus: 200, fallbackDepth: 0 });
    expect(events[1].metadata).toMatchObject({ actor: 'key:acme-app', correlationId: requestId });
    // No prompt or completion content is ever stored.
    expect(canonicalJson(events)).not.toMatch(/Hello there|Switchyard routes/);
  });

  test('cached prompt tokens are billed at the cached price and not again as input', async () => {
    gw.mock.addScenario({ model: 'model-primary', times: 1, behaviour: { cachedTokens: 4 } });
    const response = await postJson(gw, '/v1/chat/completions', hello);
    const attempt = (await gw.requestEvents(response.headers.get('x-request-id')!))[1].data as AttemptFinished['data'];
    const prompt = response.json.usage.prompt_tokens;
    expect(attempt.usage.cachedInput).toBe(4);
    const expected = new Decimal(prompt - 4).times('2.50').plus(new Decimal(4).times('1.25')).plus(new Decimal(12).times('10.00')).div(1_000_000);
    expect(attempt.cost.total).toBe(expected.toFixed(12));
  });

  test('a 5xx from the first route falls back to the next one before any output', async () => {
    gw.mock.addScenario({ model: 'model-primary', behaviour: { status: 500 } });
    const response = await postJson(gw, '/v1/chat/completions', hello);
    expect(response.status).toBe(200);
    expect(gw.mock.requests().map((r) => r.model)).toEqual(['model-primary', 'model-backup']);
    const events = await gw.requestEvents(response.headers.get('x-request-id')!);
    const attempts = events.filter((e) => e.type === 'AttemptFinished').map((e) => e.data as AttemptFinished['data']);
    expect(attempts.map((a) => [a.deploymentId, a.outcome, a.errorClass])).toEqual([
      ['primary', 'failed', 'transient'],
      ['backup', 'success', null],
    ]);
    expect((events.at(-1)!.data as RequestCompleted['data']).fallbackDepth).toBe(1);
  });

  test('when every route fails the client gets 503 naming the routes tried, without provider internals', async () => {
    gw.mock.addScenario({ behaviour: { status: 502 } });
    const response = await postJson(gw, '/v1/chat/completions', hello);
    expect(response.status).toBe(503);
    expect(response.json.error.code).toBe('all_providers_unavailable');
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(response.text).not.toContain(gw.mockUrl);
    expect(response.text).not.toContain('upstream-secret-value');
    const events = await gw.requestEvents(response.headers.get('x-request-id')!);
    expect(events.map((e) => e.type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'AttemptFinished', 'RequestCompleted']);
  });

  test('a 400 from the provider is not retried elsewhere', async () => {
    gw.mock.addScenario({ model: 'model-primary', behaviour: { status: 400 } });
    const response = await postJson(gw, '/v1/chat/completions', hello);
    expect(response.status).toBe(400);
    expect(gw.mock.requests()).toHaveLength(1);
  });

  test('SSE ends with [DONE]; the usage frame the gateway asked for is stripped when the client did not ask', async () => {
    const response = await postJson(gw, '/v1/chat/completions', { ...hello, stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = sseData(response.text);
    expect(frames.at(-1)).toBe('[DONE]');
    expect(frames.slice(0, -1).every((f) => !('usage' in JSON.parse(f)))).toBe(true);
    expect(gw.mock.requests()[0].includeUsage).toBe(true);
    const events = await gw.requestEvents(response.headers.get('x-request-id')!);
    expect((events[1].data as AttemptFinished['data']).usageEvidence).toBe('provider');
  });

  test('a failure after the first token ends the stream with an error event, no [DONE], no fallback', async () => {
    gw.mock.addScenario({ model: 'model-primary', behaviour: { errorAfterChunks: 3 } });
    const response = await postJson(gw, '/v1/chat/completions', { ...hello, stream: true });
    const frames = sseData(response.text);
    expect(frames).not.toContain('[DONE]');
    expect(JSON.parse(frames.at(-1)!).error).toMatchObject({ code: 'upstream_error' });
    expect(gw.mock.requests()).toHaveLength(1);
    const events = await gw.requestEvents(response.headers.get('x-request-id')!);
    const attempt = events[1].data as AttemptFinished['data'];
    expect(attempt.outcome).toBe('failed_partial');
    expect(attempt.usageEvidence).toBe('counted');
    expect(attempt.usage.output).toBeGreaterThan(0);
  });

  test('a stream that fails before its first token falls back', async () => {
    gw.mock.addScenario({ model: 'model-primary', behaviour: { errorAfterChunks: 0 } });
    const response = await postJson(gw, '/v1/chat/completions', { ...hello, stream: true });
    expect(sseData(response.text).at(-1)).toBe('[DONE]');
    expect(gw.mock.requests().map((r) => r.model)).toEqual(['model-primary', 'model-backup']);
  });

  test('a client that disconnects mid-stream aborts the upstream call and its partial usage is recorded', async () => {
    gw.mock.addScenario({ model: 'model-primary', behaviour: { chunks: 50, chunkGapMs: 40 } });
    const controller = new AbortController();
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...hello, stream: true }),
      signal: controller.signal,
    });
    const requestId = response.headers.get('x-request-id')!;
    const reader = response.body!.getReader();
    await reader.read();
    await new Promise((resolve) => setTimeout(resolve, 150));
    const abortedAt = Date.now();
    controller.abort();
    await waitFor(() => gw.mock.requests()[0]?.outcome === 'aborted');
    expect(gw.mock.requests()[0].endedAt! - abortedAt).toBeLessThan(100);
    await waitFor(async () => (await gw.requestEvents(requestId)).length === 3);
    const events = await gw.requestEvents(requestId);
    const attempt = events[1].data as AttemptFinished['data'];
    expect(attempt.outcome).toBe('cancelled');
    expect(attempt.usage.output).toBeGreaterThan(0);
    expect((events[2].data as RequestCompleted['data']).status).toBe('cancelled');
  });

  test('GET /v1/models lists aliases only; unknown routes answer 404 in the envelope', async () => {
    const models = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.key}` } });
    const body = (await models.json()) as { data: Array<{ id: string }> };
    expect(body.data.map((m: { id: string }) => m.id).sort()).toEqual(['chat', 'solo']);
    expect(JSON.stringify(body)).not.toMatch(/primary|backup|mock-upstream|127\.0\.0\.1/);
    const missing = await fetch(`${gw.url}/v1/nothing`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
