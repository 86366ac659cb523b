import OpenAI from 'openai';
import type { AttemptFinished, RequestCompleted } from '../../events/request-events.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { canonicalJson } from '../../src/kernel/canonical-json.js';

const CREDENTIALS_ENV = 'SY_TEST_BEDROCK_CREDENTIALS';
const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

/** An alias backed by a `type: bedrock` provider whose base URL is the test's mock (it speaks Converse). */
function bedrockYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
  - id: aws-bedrock
    type: bedrock
    region: us-east-1
    baseUrl: ${mockUrl}
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:${CREDENTIALS_ENV}
deployments:
  - id: claude-bedrock
    provider: aws-bedrock
    model: ${MODEL}
    capabilities: [chat, streaming, tools, vision]
    contextWindow: 200000
    maxOutputTokens: 8192
    price: { inputPer1M: "3.00", outputPer1M: "15.00", cachedInputPer1M: "0.30", cacheWritePer1M: "3.75" }
aliases:
  - name: bedrock-chat
    routes:
      - { deployment: claude-bedrock, priority: 0 }
tenants:
  - id: acme
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference, models:read]
`;
}

/**
 * The Bedrock Converse wire format (SigV4-signed paths, system and inferenceConfig, toolConfig, parallel
 * tool results, image bytes), billing from its usage and metadata events, exception frames and
 * throttling in the ledger. The client-visible cases (text, streaming with and without usage, tool
 * calls, JSON schema refusal, images, embeddings, 401/404/429) are in the conformance matrix
 * (conformance-matrix.test.ts).
 */
describe('OpenAI SDK against a Bedrock-backed alias', () => {
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    process.env[CREDENTIALS_ENV] = `AKIDEXAMPLE:${SECRET}`;
    gw = await startTestGateway({ yaml: bedrockYaml });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  const attemptsOf = async (requestId: string) =>
    (await gw.requestEvents(requestId)).filter((e) => e.type === 'AttemptFinished').map((e) => e.data as AttemptFinished['data']);

  test('buffered chat: signed Converse call, the answer and usage; cached tokens billed at the cache price (hand-computed)', async () => {
    gw.mock.addScenario({ model: MODEL, times: 1, behaviour: { cachedTokens: 4 } });
    const { data: completion, response } = await client.chat.completions
      .create({ model: 'bedrock-chat', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }], max_tokens: 100 })
      .withResponse();
    // The mock counts ceil(chars / 4) + 3 prompt tokens over "Be brief.\nSay hello" (19 chars): 5 + 3.
    expect(completion.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 12, total_tokens: 20, prompt_tokens_details: { cached_tokens: 4 } });

    const upstream = gw.mock.requests();
    expect(upstream).toHaveLength(1);
    expect(upstream[0]).toMatchObject({ path: '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse' });
    expect(upstream[0].headers.authorization).toMatch(/^AWS4\*\*\*/);
    expect(upstream[0].headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    expect(upstream[0].body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Say hello' }] }],
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 100 },
    });

    const [attempt] = await attemptsOf(response.headers.get('x-request-id')!);
    expect(attempt).toMatchObject({ outcome: 'success', deploymentId: 'claude-bedrock', providerId: 'aws-bedrock', model: MODEL, usageEvidence: 'provider' });
    expect(attempt.usage).toEqual({ input: 8, cachedInput: 4, cacheWrite: 0, output: 12, reasoning: 0 });
    // 4 plain × $3 + 4 cached × $0.30 + 12 output × $15, per million tokens = 0.000012 + 0.0000012 + 0.00018
    expect(attempt.cost).toMatchObject({ input: '0.000012000000', cachedInput: '0.000001200000', output: '0.000180000000', total: '0.000193200000' });
    expect(canonicalJson(await gw.requestEvents(attempt.requestId))).not.toContain(SECRET);
  });

  test('streaming goes to converse-stream; usage comes from the metadata event and is billed from it', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'bedrock-chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Usage please' }] })
      .withResponse();
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    // "Usage please" is 12 characters: 3 + 3 prompt tokens.
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 12, total_tokens: 18 });
    expect(gw.mock.requests()[0]).toMatchObject({ path: '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream', stream: true });
    const [attempt] = await attemptsOf(response.headers.get('x-request-id')!);
    expect(attempt).toMatchObject({ outcome: 'success', usageEvidence: 'provider', usage: { input: 6, output: 12 } });
    expect(attempt.cost.total).toBe('0.000198000000'); // 6 × $3 + 12 × $15 per million
  });

  test('tool_choice required: a toolConfig with the toolSpec and toolChoice any goes upstream', async () => {
    const completion = await client.chat.completions.create({
      model: 'bedrock-chat',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weatherTool],
      tool_choice: 'required',
    });
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect((gw.mock.requests()[0].body as any).toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: weatherTool.function.parameters } } }],
      toolChoice: { any: {} },
    });
  });

  test('two parallel tool results: one user turn of toolResult blocks, so roles alternate upstream (the mock refuses otherwise)', async () => {
    await client.chat.completions.create({
      model: 'bedrock-chat',
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Paris and Lyon?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'tooluse_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'tooluse_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'tooluse_a', content: '18°C, sunny' },
        { role: 'tool', tool_call_id: 'tooluse_b', content: '15°C, rain' },
      ],
    });
    const body = gw.mock.requests()[0].body as any;
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(body.messages[1].content).toEqual([
      { toolUse: { toolUseId: 'tooluse_a', name: 'get_weather', input: { city: 'Paris' } } },
      { toolUse: { toolUseId: 'tooluse_b', name: 'get_weather', input: { city: 'Lyon' } } },
    ]);
    expect(body.messages[2].content).toEqual([
      { toolResult: { toolUseId: 'tooluse_a', content: [{ text: '18°C, sunny' }] } },
      { toolResult: { toolUseId: 'tooluse_b', content: [{ text: '15°C, rain' }] } },
    ]);
  });

  test('an image part travels as bytes with its format; an http image URL is refused before any call', async () => {
    await client.chat.completions.create({
      model: 'bedrock-chat',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }],
    });
    expect((gw.mock.requests()[0].body as any).messages[0].content).toEqual([{ text: 'What is this?' }, { image: { format: 'png', source: { bytes: PNG } } }]);

    gw.mock.clearRequests();
    const refused = client.chat.completions.create({
      model: 'bedrock-chat',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }],
    });
    await expect(refused).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(refused).rejects.toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'messages[0].content[0].image_url.url' });
    expect(gw.mock.requests()).toHaveLength(0);
  });

  test('an exception frame after the first token ends the stream with an error, recorded as failed_partial', async () => {
    gw.mock.addScenario({ model: MODEL, times: 1, behaviour: { errorAfterChunks: 3 } });
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'bedrock-chat', stream: true, messages: [{ role: 'user', content: 'Stream then fail' }] })
      .withResponse();
    let text = '';
    let caught: unknown;
    try {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    } catch (error) {
      caught = error;
    }
    expect(text).toBe('Switchyard routes this');
    expect(caught).toBeInstanceOf(OpenAI.APIError);
    const [attempt] = await attemptsOf(response.headers.get('x-request-id')!);
    expect(attempt).toMatchObject({ outcome: 'failed_partial', errorClass: 'transient', usageEvidence: 'counted' });
    expect(attempt.usage.output).toBeGreaterThan(0);
  });
  // Last: the provider's retry-after holds the deployment back for the tests after it.
  test('an upstream 429 ThrottlingException: every attempt is recorded as rate_limited at zero cost, the request as failed 429', async () => {
    gw.mock.addScenario({ model: MODEL, behaviour: { status: 429, retryAfterSeconds: 7 } });
    let caught: unknown;
    try {
      await client.chat.completions.create({ model: 'bedrock-chat', messages: [{ role: 'user', content: 'x' }] });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(OpenAI.RateLimitError);
    const error = caught as InstanceType<typeof OpenAI.RateLimitError>;
    const requestId = error.headers?.get('x-request-id') as string;
    const attempts = await attemptsOf(requestId);
    expect(attempts.length).toBeGreaterThanOrEqual(1);
    for (const attempt of attempts) {
      expect(attempt).toMatchObject({ outcome: 'failed', errorClass: 'rate_limited', httpStatus: 429, cost: { total: '0.000000000000' } });
    }
    const completed = (await gw.requestEvents(requestId)).find((e) => e.type === 'RequestCompleted')!.data as RequestCompleted['data'];
    expect(completed).toMatchObject({ status: 'failed', httpStatus: 429, errorCode: 'rate_limited' });
  }, 20_000); // generous: a retry policy may wait out a short retry-after before giving up
});
