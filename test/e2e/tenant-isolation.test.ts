import type { AttemptFinished, RequestCompleted } from '../../events/request-events.js';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import type { StreamEvent } from '../../modules/canonical/chat-response.js';
import { GatewayError } from '../../modules/canonical/gateway-error.js';
import type { ProviderAdapter } from '../../modules/providers/provider-adapter.js';
import { ProviderAdapters } from '../../modules/providers/provider-adapters.js';
import { type TestGateway, postJson, sseData, startTestGateway } from '../support/gateway-harness.js';
import { healthOf } from '../support/resilience.js';

/**
 * Issue 8, observed item 3: one tenant's hostile body must not cost any other tenant anything. Two
 * tenants share one alias (two deployments on the mock); breakers open after two consecutive failures
 * and stay open for a minute, so a single failure counted against a deployment would show.
 */
const KEY_B_ENV = `SY_TEST_TENANT_B_${process.pid}_KEY`;
const BREAKER_EVENTS = ['BreakerOpened', 'BreakerHalfOpened', 'BreakerClosed'];

const yaml = (mockUrl: string, keyEnv: string) => `
providers:
  - id: mock-upstream
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true
    apiKey: env:SY_TEST_UPSTREAM_KEY
deployments:
${['primary', 'backup'].map((id) => `  - id: ${id}
    provider: mock-upstream
    model: model-${id}
    capabilities: [chat, streaming, tools, json_object, json_schema, embeddings]
    contextWindow: 1000000
    maxOutputTokens: 4096
    price: { inputPer1M: "1.00", outputPer1M: "2.00" }`).join('\n')}
aliases:
  - name: chat
    routes:
      - { deployment: primary, priority: 0 }
      - { deployment: backup, priority: 1 }
tenants:
  - id: tenant-a
  - id: tenant-b
apiKeys:
  - id: key-a
    tenant: tenant-a
    key: env:${keyEnv}
    scopes: [inference]
  - id: key-b
    tenant: tenant-b
    key: env:${KEY_B_ENV}
    scopes: [inference]
`;

/** `{"a":{"a":…}}` 10,000 levels deep as JSON text (60 KB): the body of the original report. */
const DEEP = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
const A_MARK = 'tenant-a-marker';

/** Hostile bodies from tenant A, as raw JSON text (no client could build them with JSON.stringify). */
const hostile: Array<{ name: string; path: string; anthropic: boolean; body: string; param: string }> = [
  ...[false, true].flatMap((stream) => [
    {
      name: `response_format.json_schema.schema, ${stream ? 'streaming' : 'buffered'}`, path: '/v1/chat/completions', anthropic: false,
      body: `{"model":"chat","stream":${stream},"user":"${A_MARK}","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":${DEEP}}}}`,
      param: 'response_format.json_schema.schema',
    },
    {
      name: `tools[].function.parameters, ${stream ? 'streaming' : 'buffered'}`, path: '/v1/chat/completions', anthropic: false,
      body: `{"model":"chat","stream":${stream},"user":"${A_MARK}","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${DEEP}}}]}`,
      param: 'tools[0].function.parameters',
    },
    {
      name: `tool_calls[].function.arguments, ${stream ? 'streaming' : 'buffered'}`, path: '/v1/chat/completions', anthropic: false,
      body: `{"model":"chat","stream":${stream},"user":"${A_MARK}","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":${JSON.stringify(DEEP)}}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}],"tools":[{"type":"function","function":{"name":"f"}}]}`,
      param: 'messages[1].tool_calls[0].function.arguments',
    },
    {
      name: `Anthropic tools[].input_schema, ${stream ? 'streaming' : 'buffered'}`, path: '/v1/messages', anthropic: true,
      body: `{"model":"chat","max_tokens":32,"stream":${stream},"metadata":{"user_id":"${A_MARK}"},"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":${DEEP}}]}`,
      param: 'tools.0.input_schema',
    },
    {
      name: `Anthropic tool_use input, ${stream ? 'streaming' : 'buffered'}`, path: '/v1/messages', anthropic: true,
      body: `{"model":"chat","max_tokens":32,"stream":${stream},"metadata":{"user_id":"${A_MARK}"},"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":${DEEP}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}],"tools":[{"name":"f","input_schema":{"type":"object"}}]}`,
      param: 'messages.1.content.0.input',
    },
  ]),
  {
    name: 'embeddings input', path: '/v1/embeddings', anthropic: false,
    body: `{"model":"chat","user":"${A_MARK}","input":${'['.repeat(10_000)}"x"${']'.repeat(10_000)}}`,
    param: 'input',
  },
];

let gw: TestGateway;
let keyB: string;

beforeAll(async () => {
  keyB = generateApiKey();
  process.env[KEY_B_ENV] = keyB;
  gw = await startTestGateway({
    yaml,
    environment: {
      resilience: {
        breaker: { consecutiveFailures: 2, minSamples: 2, cooldownMs: 60_000, maxCooldownMs: 60_000 },
        retry: { baseBackoffMs: 1, maxBackoffMs: 5 },
      },
    },
  });
});
afterAll(async () => {
  await gw.close();
  delete process.env[KEY_B_ENV];
});
beforeEach(() => {
  gw.mock.clearScenarios();
  gw.mock.clearRequests();
});

describe('tenant isolation: a tenant’s hostile body costs no other tenant anything', () => {
  const asA = (path: string, body: string, anthropic: boolean) =>
    postJson(gw, path, body, anthropic ? { authorization: '', 'x-api-key': gw.key } : {});
  const asB = (stream: boolean, anthropic = false) =>
    anthropic
      ? postJson(gw, '/v1/messages', { model: 'chat', max_tokens: 32, stream, messages: [{ role: 'user', content: 'hello from B' }] }, { authorization: '', 'x-api-key': keyB })
      : postJson(gw, '/v1/chat/completions', { model: 'chat', stream, messages: [{ role: 'user', content: 'hello from B' }] }, { authorization: `Bearer ${keyB}` });
  const breakerEventCount = () => gw.countEvents(BREAKER_EVENTS);
  const admittedFor = async (tenant: string) =>
    Number((await gw.gateway.platform.database.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM events WHERE event_type = 'RequestAdmitted' AND data->>'tenantId' = $1`, [tenant],
    ))[0].n);

  test.each(hostile)('a deep $name from tenant A is a 400 naming $param', async ({ path, body, anthropic, param }) => {
    const response = await asA(path, body, anthropic);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    if (anthropic) {
      expect(response.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(response.json.error.message).toContain(param);
    } else {
      expect(response.json.error).toMatchObject({ code: 'invalid_request', type: 'invalid_request_error' });
      expect(response.json.error.param).toMatch(new RegExp(`^${param.replace(/[[\].]/g, '\\$&')}`));
    }
    expect(gw.mock.requests()).toHaveLength(0);
  });

  test('while tenant A sends them over and over, tenant B is served on the same deployments and no breaker moves', async () => {
    const before = await breakerEventCount();
    const aRequests = Array.from({ length: 4 }, () => hostile.map(({ path, body, anthropic }) => asA(path, body, anthropic))).flat();
    const bRequests = Array.from({ length: 8 }, (_, i) => asB(i % 2 === 1, i % 4 >= 2));
    const [aResults, bResults] = await Promise.all([Promise.all(aRequests), Promise.all(bRequests)]);
    expect(aResults.map((r) => r.status)).toEqual(aResults.map(() => 400));
    expect(bResults.map((r) => r.status)).toEqual(bResults.map(() => 200));
    // And afterwards, too: nothing was counted against either deployment.
    for (const stream of [false, true]) expect((await asB(stream)).status).toBe(200);

    const upstream = gw.mock.requests();
    expect(upstream).toHaveLength(bRequests.length + 2);
    expect(upstream.every((r) => r.model === 'model-primary')).toBe(true);
    expect(JSON.stringify(upstream.map((r) => r.body))).not.toContain(A_MARK);
    expect(healthOf(gw).unavailable('primary')).toBeNull();
    expect(healthOf(gw).unavailable('backup')).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 200)); // breaker events are appended in the background
    expect(await breakerEventCount()).toBe(before);
    expect(await admittedFor('tenant-a')).toBe(0);
  });
});

/**
 * The gateway's own failures during an attempt (issue 8, Build 4): an exception while building the
 * upstream request or translating its answer is our 500 (or the caller's 4xx), never a provider failure.
 */
describe('a gateway fault during an attempt never counts against the deployment', () => {
  let adapters: ProviderAdapters;
  let real: ProviderAdapter;

  beforeAll(() => {
    adapters = gw.gateway.app.get(ProviderAdapters);
    real = adapters.for('openai-compatible')!;
    // The real adapter, except that a marked request meets a bug of ours while its upstream request is
    // built, or in the middle of translating the provider's stream.
    const bug = () => new TypeError("Cannot read properties of undefined (reading 'parts')");
    adapters.register('openai-compatible', {
      unsupportedParameter: (request, deployment) => real.unsupportedParameter(request, deployment),
      unsentParameters: (request, deployment) => real.unsentParameters(request, deployment),
      chat: async (call) => {
        if (call.request.user === 'build-bug') throw bug();
        if (call.request.user === 'build-refusal') throw new GatewayError(400, 'invalid_request', 'This request cannot be expressed for the provider.', 'tools');
        return real.chat(call);
      },
      chatStream: async (call) => {
        if (call.request.user === 'build-bug') throw bug();
        const upstream = await real.chatStream(call);
        if (call.request.user !== 'translation-bug') return upstream;
        return {
          get providerRequestId() {
            return upstream.providerRequestId;
          },
          events: (async function* (): AsyncGenerator<StreamEvent> {
            let sentText = false;
            for await (const event of upstream.events) {
              if (sentText) throw bug();
              yield event;
              if (event.type === 'text' && event.text.length > 0) sentText = true;
            }
          })(),
        };
      },
      embed: async (call) => {
        if (call.request.user === 'build-bug') throw bug();
        return real.embed!(call);
      },
    });
  });
  afterAll(() => {
    adapters.register('openai-compatible', real);
  });

  const events = (response: { headers: Headers }) => gw.requestEvents(response.headers.get('x-request-id')!);

  test('a bug while building the request: 500 of our own, no upstream call, no fallback, no attempt recorded, breaker untouched', async () => {
    const before = await gw.countEvents(BREAKER_EVENTS);
    for (const stream of [false, true, false, true]) {
      const response = await postJson(gw, '/v1/chat/completions', { model: 'chat', stream, user: 'build-bug', messages: [{ role: 'user', content: 'hi' }] });
      expect(response.status).toBe(500);
      expect(response.json.error).toMatchObject({ code: 'internal_error', type: 'server_error' });
      expect(response.text).not.toContain('parts');
      const recorded = await events(response);
      expect(recorded.map((e) => e.type)).toEqual(['RequestAdmitted', 'RequestCompleted']);
      expect(recorded[1].data as RequestCompleted['data']).toMatchObject({ status: 'failed', httpStatus: 500, errorCode: 'internal_error' });
    }
    const embeddings = await postJson(gw, '/v1/embeddings', { model: 'chat', user: 'build-bug', input: 'hi' });
    expect(embeddings.status).toBe(500);
    expect(gw.mock.requests()).toHaveLength(0);
    expect(healthOf(gw).unavailable('primary')).toBeNull();
    const served = await postJson(gw, '/v1/chat/completions', { model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(served.status).toBe(200);
    expect(gw.mock.requests().map((r) => r.model)).toEqual(['model-primary']);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await gw.countEvents(BREAKER_EVENTS)).toBe(before);
  });

  test('a refusal raised while building the request is the caller’s 400, not retried elsewhere', async () => {
    const response = await postJson(gw, '/v1/chat/completions', { model: 'chat', user: 'build-refusal', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'invalid_request', param: 'tools' });
    expect(gw.mock.requests()).toHaveLength(0);
  });

  test('a bug while translating a stream after output: the stream ends with our error, the tokens are billed, the deployment is not blamed', async () => {
    const before = await gw.countEvents(BREAKER_EVENTS);
    for (let i = 0; i < 3; i++) {
      const response = await postJson(gw, '/v1/chat/completions', { model: 'chat', stream: true, user: 'translation-bug', messages: [{ role: 'user', content: 'hi' }] });
      expect(response.status).toBe(200);
      const frames = sseData(response.text);
      expect(frames).not.toContain('[DONE]');
      expect(JSON.parse(frames.at(-1)!)).toMatchObject({ error: { code: 'internal_error' } });
      const recorded = await events(response);
      expect(recorded.map((e) => e.type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']);
      const attempt = recorded[1].data as AttemptFinished['data'];
      expect(attempt).toMatchObject({ deploymentId: 'primary', outcome: 'failed_partial', errorClass: null });
      expect(attempt.usage.output).toBeGreaterThan(0);
      expect(recorded[2].data as RequestCompleted['data']).toMatchObject({ status: 'failed', httpStatus: 500, errorCode: 'internal_error' });
    }
    // One upstream call per request: nothing was retried or tried on the backup.
    expect(gw.mock.requests().map((r) => r.model)).toEqual(['model-primary', 'model-primary', 'model-primary']);
    expect(healthOf(gw).unavailable('primary')).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await gw.countEvents(BREAKER_EVENTS)).toBe(before);
  });
});
