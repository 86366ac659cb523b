import { Decimal } from 'decimal.js';
import OpenAI from 'openai';
import type { AttemptFinished } from '../../events/request-events.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';

const UPSTREAM_SECRET = 'upstream-secret-value-123456';
const API_VERSION = '2024-10-21';

/** An Azure OpenAI resource (the test's mock) with chat and embeddings deployments; `model` is the Azure deployment name. */
function azureYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
  - id: azure-eastus
    type: azure-openai
    baseUrl: ${mockUrl}
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:SY_TEST_UPSTREAM_KEY
    apiVersion: "${API_VERSION}"
deployments:
  - id: azure-gpt4o
    provider: azure-eastus
    model: gpt4o-prod-eastus
    capabilities: [chat, streaming, tools, vision, json_object, json_schema]
    contextWindow: 128000
    maxOutputTokens: 16384
    price: { inputPer1M: "2.50", outputPer1M: "10.00", cachedInputPer1M: "1.25" }
  - id: azure-text
    provider: azure-eastus
    model: gpt35-text-eastus
    capabilities: [chat, streaming]
    contextWindow: 16000
    maxOutputTokens: 4096
    price: { inputPer1M: "0.50", outputPer1M: "1.50" }
  - id: azure-embed
    provider: azure-eastus
    model: embed-small-eastus
    capabilities: [embeddings]
    contextWindow: 8191
    price: { inputPer1M: "0.02", outputPer1M: "0" }
aliases:
  - name: azure-chat
    routes:
      - { deployment: azure-gpt4o, priority: 0 }
  - name: azure-text
    routes:
      - { deployment: azure-text, priority: 0 }
  - name: azure-embed
    routes:
      - { deployment: azure-embed, priority: 0 }
tenants:
  - id: acme
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference, models:read]
`;
}

const weatherTool: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } },
};

/**
 * The official `openai` SDK against aliases served by an Azure OpenAI-type provider: the Azure wire
 * format (deployment paths, api-version, api-key, no model in the body), cached-token billing and
 * capability refusals. The client-visible cases (text, streaming with and without usage, tool calls,
 * JSON schema, images, embeddings, models, 401/404/429) are in the conformance matrix
 * (conformance-matrix.test.ts).
 */
describe('OpenAI SDK → Switchyard → Azure OpenAI', () => {
  let gw: TestGateway;
  let client: OpenAI;
  const output: string[] = [];
  const writes = { out: process.stdout.write, err: process.stderr.write };

  beforeAll(async () => {
    // Capture (and hold back) everything the gateway prints at its most verbose level: the api-key must never be in it.
    for (const stream of [process.stdout, process.stderr]) {
      stream.write = ((chunk: string | Uint8Array) => {
        output.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        return true;
      }) as typeof stream.write;
    }
    gw = await startTestGateway({ yaml: azureYaml, environment: { logLevel: 'debug' } });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    const printed = output.join('');
    expect(printed).toMatch(/Nest application successfully started|Starting Nest application/);
    expect(printed).not.toContain(UPSTREAM_SECRET);
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  test('buffered chat: deployment path, api-version query, api-key header, no model in the body; exact cost', async () => {
    const { data: completion, response } = await client.chat.completions
      .create({ model: 'azure-chat', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }], max_tokens: 64, seed: 11 })
      .withResponse();
    const [upstream] = gw.mock.requests();
    expect(upstream).toMatchObject({ path: '/openai/deployments/gpt4o-prod-eastus/chat/completions', query: { 'api-version': API_VERSION } });
    expect(upstream.headers['api-key']).toMatch(/^upst\*\*\*56$/);
    expect(upstream.headers.authorization).toBeUndefined();
    expect(upstream.body).toEqual({
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }],
      max_completion_tokens: 64,
      seed: 11,
    });

    const attempt = (await gw.requestEvents(response.headers.get('x-request-id')!)).find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];
    const prompt = completion.usage!.prompt_tokens;
    expect(attempt).toMatchObject({ outcome: 'success', deploymentId: 'azure-gpt4o', providerId: 'azure-eastus', model: 'gpt4o-prod-eastus', usageEvidence: 'provider' });
    expect(attempt.usage).toEqual({ input: prompt, cachedInput: 0, cacheWrite: 0, output: 12, reasoning: 0 });
    expect(attempt.cost.total).toBe(new Decimal(prompt).times('2.50').plus(new Decimal(12).times('10.00')).div(1_000_000).toFixed(12));
  });

  test('cached prompt tokens from Azure are billed at the cached price', async () => {
    gw.mock.addScenario({ model: 'gpt4o-prod-eastus', times: 1, behaviour: { cachedTokens: 2 } });
    const { data: completion, response } = await client.chat.completions.create({ model: 'azure-chat', messages: [{ role: 'user', content: 'Cache me if you can' }] }).withResponse();
    const prompt = completion.usage!.prompt_tokens;
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(2);
    const attempt = (await gw.requestEvents(response.headers.get('x-request-id')!)).find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];
    const expected = new Decimal(prompt - 2).times('2.50').plus(new Decimal(2).times('1.25')).plus(new Decimal(12).times('10.00')).div(1_000_000);
    expect(attempt.cost.total).toBe(expected.toFixed(12));
  });

  test('streaming without include_usage: the gateway still asks Azure for usage, on the deployment path with api-version', async () => {
    const stream = await client.chat.completions.create({ model: 'azure-chat', stream: true, messages: [{ role: 'user', content: 'Stream please' }] });
    let usageChunks = 0;
    for await (const chunk of stream) if (chunk.usage) usageChunks++;
    expect(usageChunks).toBe(0);
    const [upstream] = gw.mock.requests();
    expect(upstream).toMatchObject({ stream: true, includeUsage: true, query: { 'api-version': API_VERSION }, outcome: 'completed' });
    expect(upstream.body).not.toHaveProperty('model');
  });

  test('a tool call: tool_choice and the JSON Schema are passed through untouched', async () => {
    const completion = await client.chat.completions.create({
      model: 'azure-chat', messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: [weatherTool], tool_choice: 'required',
    });
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    const body = gw.mock.requests()[0].body as any;
    expect(body.tool_choice).toBe('required');
    // Azure takes the JSON Schema as OpenAI does: nothing is stripped.
    expect(body.tools[0].function.parameters.additionalProperties).toBe(false);
  });

  test('multi-turn: the tool result is sent as a tool message with its call id', async () => {
    await client.chat.completions.create({
      model: 'azure-chat',
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
        { role: 'tool', tool_call_id: 'call_abc', content: '{"temperature":-3}' },
      ],
    });
    expect((gw.mock.requests()[0].body as any).messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_abc', content: '{"temperature":-3}' },
    ]);
  });

  test('JSON schema output is passed to Azure as response_format', async () => {
    await client.chat.completions.create({
      model: 'azure-chat',
      messages: [{ role: 'user', content: 'Capital of Norway' }],
      response_format: { type: 'json_schema', json_schema: { name: 'capital', strict: true, schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } },
    });
    expect((gw.mock.requests()[0].body as any).response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'capital', strict: true } });
  });

  test('an image part reaches a vision deployment; a text-only alias refuses it before any upstream call', async () => {
    const content: OpenAI.Chat.Completions.ChatCompletionContentPart[] = [
      { type: 'text', text: 'Describe' },
      { type: 'image_url', image_url: { url: 'https://example.com/dog.png', detail: 'high' } },
    ];
    await client.chat.completions.create({ model: 'azure-chat', messages: [{ role: 'user', content }] });
    expect((gw.mock.requests()[0].body as any).messages[0].content).toEqual([
      { type: 'text', text: 'Describe' },
      { type: 'image_url', image_url: { url: 'https://example.com/dog.png', detail: 'high' } },
    ]);
    gw.mock.clearRequests();
    await expect(client.chat.completions.create({ model: 'azure-text', messages: [{ role: 'user', content }] })).rejects.toMatchObject({ status: 400, code: 'unsupported_parameter' });
    expect(gw.mock.requests()).toHaveLength(0);
  });

  test('an Azure deployment name used as model is a NotFoundError: only aliases are models', async () => {
    await expect(client.chat.completions.create({ model: 'gpt4o-prod-eastus', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(gw.mock.requests()).toHaveLength(0);
  });

  test('embeddings: the deployment path with api-version and the api-key header; no model in the body', async () => {
    const result = await client.embeddings.create({ model: 'azure-embed', input: ['alpha', 'beta'], encoding_format: 'float', dimensions: 256 });
    expect(result.data).toHaveLength(2);
    const [upstream] = gw.mock.requests();
    expect(upstream).toMatchObject({ format: 'openai-embeddings', path: '/openai/deployments/embed-small-eastus/embeddings', query: { 'api-version': API_VERSION }, model: 'embed-small-eastus' });
    expect(upstream.headers['api-key']).toMatch(/^upst\*\*\*56$/);
    expect(upstream.headers.authorization).toBeUndefined();
    expect(upstream.body).toEqual({ input: ['alpha', 'beta'], encoding_format: 'float', dimensions: 256 });
  });
});
