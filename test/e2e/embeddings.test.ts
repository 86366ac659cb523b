import OpenAI from 'openai';
import type { AttemptFinished, RequestAdmitted, RequestCompleted } from '../../events/request-events.js';
import { mockEmbedding } from '../../modules/providers/mock/mock-embeddings.js';
import { AdmissionControl } from '../../modules/limits/admission-control.js';
import { DeploymentHealth } from '../../modules/inference/resilience/deployment-health.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';
import { canonicalJson } from '../../src/kernel/canonical-json.js';
import { countTokens } from '../../modules/canonical/tokenizer.js';

const CREDENTIALS_ENV = 'SY_TEST_BEDROCK_CREDENTIALS';
const REQUEST_EVENTS = ['RequestAdmitted', 'AttemptFinished', 'RequestCompleted', 'RequestRejected'];
const TITAN = 'amazon.titan-embed-text-v2:0';

/** `embed`: an OpenAI-compatible embeddings deployment, then Titan on Bedrock; `embed-titan`: Titan only; `chat`: no embeddings. */
function embeddingsYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
  - id: mock-openai
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:SY_TEST_UPSTREAM_KEY
  - id: aws-bedrock
    type: bedrock
    region: us-east-1
    baseUrl: ${mockUrl}
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:${CREDENTIALS_ENV}
deployments:
  - id: openai-embed
    provider: mock-openai
    model: text-embedding-3-small
    capabilities: [embeddings]
    contextWindow: 8191
    price: { inputPer1M: "0.02", outputPer1M: "0" }
  - id: titan-embed
    provider: aws-bedrock
    model: ${TITAN}
    capabilities: [embeddings]
    contextWindow: 8192
    price: { inputPer1M: "0.10", outputPer1M: "0" }
  - id: chat-only
    provider: mock-openai
    model: gpt-mock
    capabilities: [chat, streaming]
    price: { inputPer1M: "1.00", outputPer1M: "2.00" }
aliases:
  - name: embed
    routes:
      - { deployment: openai-embed, priority: 0 }
      - { deployment: titan-embed, priority: 1 }
  - name: embed-titan
    routes:
      - { deployment: titan-embed, priority: 0 }
  - name: chat
    routes:
      - { deployment: chat-only, priority: 0 }
tenants:
  - id: acme
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference, models:read]
`;
}

/** The mock counts ceil(characters / 4) tokens per input. */
/** What the gateway reserves at admission (the real tokenizer). */
const estimated = (inputs: string[]) => inputs.reduce((sum, text) => sum + Math.max(1, countTokens(text)), 0);

function float32(base64: string): number[] {
  const bytes = Buffer.from(base64, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}

/**
 * Embeddings beyond what the conformance matrix checks per provider format (vectors, order, usage):
 * the ledger events and cost, base64 encoding, dimensions, Titan's per-input calls and pricing,
 * fallback, breakers, provider validation errors and bad-input envelopes.
 */
describe('POST /v1/embeddings', () => {
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    process.env[CREDENTIALS_ENV] = 'AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
    gw = await startTestGateway({ yaml: embeddingsYaml });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  const eventsOf = async (requestId: string) => {
    const events = await gw.requestEvents(requestId);
    return {
      types: events.map((e) => e.type),
      admitted: events.find((e) => e.type === 'RequestAdmitted')?.data as RequestAdmitted['data'],
      attempts: events.filter((e) => e.type === 'AttemptFinished').map((e) => e.data as AttemptFinished['data']),
      completed: events.find((e) => e.type === 'RequestCompleted')?.data as RequestCompleted['data'],
    };
  };

  test('the upstream body and credential, and the ledger events: admitted as embeddings, attempt with usage and cost, completed', async () => {
    const input = ['The quick brown fox', 'jumps over the lazy dog, twice over'];
    const { response } = await client.embeddings.create({ model: 'embed', input, encoding_format: 'float' }).withResponse();

    const upstream = gw.mock.requests();
    expect(upstream).toHaveLength(1);
    expect(upstream[0]).toMatchObject({ path: '/v1/embeddings' });
    expect(upstream[0].body).toEqual({ model: 'text-embedding-3-small', input, encoding_format: 'float' });
    expect(upstream[0].headers.authorization).toMatch(/^Bear\*\*\*/);

    const { types, admitted, attempts, completed } = await eventsOf(response.headers.get('x-request-id')!);
    expect(types).toEqual(['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']);
    expect(admitted).toMatchObject({ alias: 'embed', operation: 'embeddings', stream: false, clientFormat: 'openai', estimatedInputTokens: estimated(input), reservedOutputTokens: 0 });
    expect(attempts[0]).toMatchObject({ attempt: 1, outcome: 'success', deploymentId: 'openai-embed', usageEvidence: 'provider', httpStatus: 200, priceVersion: 1 });
    expect(attempts[0].usage).toEqual({ input: 14, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 });
    // 14 tokens × $0.02 per million
    expect(attempts[0].cost).toMatchObject({ input: '0.000000280000', output: '0.000000000000', total: '0.000000280000' });
    expect(completed).toMatchObject({ status: 'success', httpStatus: 200, fallbackDepth: 0, totals: { costUsd: '0.000000280000', attempts: 1 } });
    expect(canonicalJson(await gw.requestEvents(response.headers.get('x-request-id')!))).not.toContain('quick brown fox');
  });

  test('base64: little-endian float32 bytes, explicitly or as the SDK asks by default (and decodes)', async () => {
    const input = 'encode me as bytes';
    const explicit = await client.embeddings.create({ model: 'embed', input, encoding_format: 'base64' });
    expect(typeof explicit.data[0].embedding).toBe('string');
    expect(float32(explicit.data[0].embedding as unknown as string)).toEqual(mockEmbedding(input, 1536));

    const byDefault = await client.embeddings.create({ model: 'embed', input });
    expect(byDefault.data[0].embedding).toEqual(mockEmbedding(input, 1536));

    const raw = await postJson(gw, '/v1/embeddings', { model: 'embed', input: [input], encoding_format: 'base64' });
    expect(raw.status).toBe(200);
    expect(float32(raw.json.data[0].embedding)).toEqual(mockEmbedding(input, 1536));
    // Upstream always gets floats; the gateway encodes.
    expect(gw.mock.requests().every((r) => (r.body as { encoding_format: string }).encoding_format === 'float')).toBe(true);
  });

  test('dimensions and user are passed to the provider', async () => {
    const result = await client.embeddings.create({ model: 'embed', input: 'short', dimensions: 256, user: 'user-7', encoding_format: 'float' });
    expect(result.data[0].embedding).toHaveLength(256);
    expect(gw.mock.requests()[0].body).toMatchObject({ dimensions: 256, user: 'user-7' });
  });

  test('a Bedrock Titan route: one signed InvokeModel per input, token counts from Titan, priced at its own rate', async () => {
    const input = ['alpha', 'beta gamma', 'delta epsilon zeta'];
    const { response } = await client.embeddings.create({ model: 'embed-titan', input, encoding_format: 'float' }).withResponse();
    const upstream = gw.mock.requests();
    expect(upstream.map((r) => r.path)).toEqual(Array(3).fill('/model/amazon.titan-embed-text-v2%3A0/invoke'));
    expect(upstream.every((r) => /^AWS4\*\*\*/.test(r.headers.authorization))).toBe(true);
    expect(upstream.map((r) => (r.body as { inputText: string }).inputText).sort()).toEqual([...input].sort());
    const { attempts } = await eventsOf(response.headers.get('x-request-id')!);
    expect(attempts[0]).toMatchObject({ deploymentId: 'titan-embed', providerId: 'aws-bedrock', model: TITAN, usage: { input: 10 }, usageEvidence: 'provider' });
    expect(attempts[0].cost.total).toBe('0.000001000000'); // 10 × $0.10 per million
  });

  test('a transient failure of the first route falls back to the next before any output; both attempts are recorded', async () => {
    gw.mock.addScenario({ model: 'text-embedding-3-small', times: 1, behaviour: { status: 503 } });
    const { data: result, response } = await client.embeddings.create({ model: 'embed', input: 'fall back please', encoding_format: 'float' }).withResponse();
    expect(result.data[0].embedding).toEqual(mockEmbedding('fall back please', 1024));
    const { attempts, completed } = await eventsOf(response.headers.get('x-request-id')!);
    expect(attempts.map((a) => [a.attempt, a.deploymentId, a.outcome, a.errorClass, a.httpStatus])).toEqual([
      [1, 'openai-embed', 'failed', 'overloaded', 503],
      [2, 'titan-embed', 'success', null, 200],
    ]);
    expect(attempts[0].cost.total).toBe('0.000000000000');
    expect(completed).toMatchObject({ status: 'success', fallbackDepth: 1, totals: { attempts: 2, costUsd: attempts[1].cost.total } });
  });

  test('embeddings feed the circuit breaker: after repeated failures the open deployment is skipped, and every permit is released', async () => {
    gw.mock.addScenario({ model: 'text-embedding-3-small', times: 5, behaviour: { status: 500 } });
    for (let i = 0; i < 5; i++) await client.embeddings.create({ model: 'embed', input: `failing ${i}`, encoding_format: 'float' });
    const health = gw.gateway.app.get(DeploymentHealth);
    expect(health.unavailable('openai-embed')).toMatchObject({ reason: 'circuit_open' });
    gw.mock.clearRequests();
    const { response } = await client.embeddings.create({ model: 'embed', input: 'skip the open breaker', encoding_format: 'float' }).withResponse();
    expect(gw.mock.requests().filter((r) => r.model === 'text-embedding-3-small')).toHaveLength(0);
    const { attempts } = await eventsOf(response.headers.get('x-request-id')!);
    expect(attempts.map((a) => a.deploymentId)).toEqual(['titan-embed']);
    expect(gw.gateway.app.get(AdmissionControl).load().requests).toBe(0);
  });

  test('with one route, a transient failure is retried on the same deployment (as chat does)', async () => {
    gw.mock.addScenario({ model: TITAN, times: 1, behaviour: { status: 500 } });
    const { response } = await client.embeddings.create({ model: 'embed-titan', input: 'retry me', encoding_format: 'float' }).withResponse();
    const { attempts } = await eventsOf(response.headers.get('x-request-id')!);
    expect(attempts.map((a) => [a.deploymentId, a.outcome])).toEqual([['titan-embed', 'failed'], ['titan-embed', 'success']]);
    expect(attempts[1].routing.reason).toMatch(/retry 1 after \d+ ms backoff/);
  });

  test('when every route fails, the 503 names routes by alias position, never deployments or providers', async () => {
    gw.mock.addScenario({ model: 'text-embedding-3-small', times: 3, behaviour: { status: 503 } });
    gw.mock.addScenario({ model: TITAN, times: 3, behaviour: { status: 503 } });
    const response = await postJson(gw, '/v1/embeddings', { model: 'embed', input: 'nobody home' });
    expect(response.status).toBe(503);
    expect(response.json.error).toMatchObject({ code: 'all_providers_unavailable' });
    // embed#1's breaker may still be open from the breaker test above: either way it is listed by route.
    expect(response.json.error.message).toMatch(/embed#1 \((overloaded|circuit_open)\)/);
    expect(response.json.error.message).toContain('embed#2 (overloaded)');
    expect(response.text).not.toMatch(/openai-embed|titan-embed|mock-openai|aws-bedrock|text-embedding-3-small/);
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  test('a provider validation error is not retried elsewhere; the client gets 400 in the OpenAI envelope', async () => {
    let caught: unknown;
    try {
      await client.embeddings.create({ model: 'embed-titan', input: 'x', dimensions: 100 });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(OpenAI.BadRequestError);
    const error = caught as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error.code).toBe('invalid_request');
    expect(error.message).toContain('ValidationException');
    expect(gw.mock.requests()).toHaveLength(1);
    const { attempts, completed } = await eventsOf(error.headers?.get('x-request-id') as string);
    expect(attempts).toEqual([expect.objectContaining({ outcome: 'failed', errorClass: 'invalid_request', httpStatus: 400 })]);
    expect(completed).toMatchObject({ status: 'failed', httpStatus: 400 });
  });

  test('typed SDK errors: a missing input is a BadRequestError, an unknown alias a NotFoundError', async () => {
    await expect(client.embeddings.create({ model: 'embed' } as never)).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(client.embeddings.create({ model: 'no-such-alias', input: 'x' })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  describe('bad input gets an OpenAI error envelope and appends no request events', () => {
    const cases: Array<[string, unknown, Record<string, string>, number, string, string | null]> = [
      ['missing input', { model: 'embed' }, {}, 400, 'invalid_request', 'input'],
      ['empty string input', { model: 'embed', input: '' }, {}, 400, 'invalid_request', 'input'],
      ['an empty item', { model: 'embed', input: ['a', ''] }, {}, 400, 'invalid_request', 'input[1]'],
      ['token ids', { model: 'embed', input: [1820, 25, 9059] }, {}, 400, 'unsupported_parameter', 'input'],
      ['token arrays', { model: 'embed', input: [[1820, 25], [9059]] }, {}, 400, 'unsupported_parameter', 'input'],
      ['bad encoding_format', { model: 'embed', input: 'x', encoding_format: 'int8' }, {}, 400, 'invalid_request', 'encoding_format'],
      ['bad dimensions', { model: 'embed', input: 'x', dimensions: 0 }, {}, 400, 'invalid_request', 'dimensions'],
      ['an unknown field', { model: 'embed', input: 'x', input_type: 'query' }, {}, 400, 'unsupported_parameter', 'input_type'],
      ['missing model', { input: 'x' }, {}, 400, 'invalid_request', 'model'],
      ['unknown alias', { model: 'text-embedding-ada-002', input: 'x' }, {}, 404, 'model_not_found', 'model'],
      ['a deployment id as model', { model: 'openai-embed', input: 'x' }, {}, 404, 'model_not_found', 'model'],
      ['an alias without embeddings routes', { model: 'chat', input: 'x' }, {}, 400, 'invalid_request', 'model'],
      ['a bad key', { model: 'embed', input: 'x' }, { authorization: 'Bearer sk-sy-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, 401, 'invalid_api_key', null],
    ];
    test.each(cases)('%s', async (_name, body, headers, status, code, param) => {
      const before = await gw.countEvents(REQUEST_EVENTS);
      const response = await postJson(gw, '/v1/embeddings', body, headers);
      expect(response.status).toBe(status);
      expect(response.json.error).toMatchObject({ code, param, type: expect.any(String), message: expect.any(String) });
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(gw.mock.requests()).toHaveLength(0);
      expect(await gw.countEvents(REQUEST_EVENTS)).toBe(before);
    });
  });
});
