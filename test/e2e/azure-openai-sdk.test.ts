import { Decimal } from 'decimal.js';
import OpenAI from 'openai';
import type { AttemptFinished } from '../../events/request-events.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';

const UPSTREAM_SECRET = 'upstream-secret-value-123456';
const API_VERSION = '2024-10-21';

/** An Azure OpenAI resource (the test's mock) with two deployments; `model` is the Azure deployment name. */
function azureYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
  - id: azure-eastus
    type: azure-openai
    baseUrl: ${mockUrl}
    apiKey: env:SWITCHYARD_TEST_UPSTREAM_KEY
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
aliases:
  - name: azure-chat
    routes:
      - { deployment: azure-gpt4o, priority: 0 }
  - name: azure-text
    routes:
      - { deployment: azure-text, priority: 0 }
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

/** The official `openai` SDK against aliases served by an Azure OpenAI-type provider. */
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

  test('models.list shows the aliases, never the Azure deployment names', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids.sort()).toEqual(['azure-chat', 'azure-text']);
    expect(ids.join()).not.toMatch(/eastus/);
  });

  test('buffered chat: deployment path, api-version query, api-key header, no model in the body; exact cost', async () => {
    const { data: completion, response } = await client.chat.completions
      .create({ model: 'azure-chat', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }], max_tokens: 64, seed: 11 })
      .withResponse();
    expect(completion.model).toBe('azure-chat');
    expect(completion.choices[0].message.content).toMatch(/^Switchyard routes/);
    expect(completion.choices[0].finish_reason).toBe('stop');

    const [upstream] = gw.mock.requests();
    expect(upstream).toMatchObject({ format: 'openai', path: '/openai/deployments/gpt4o-prod-eastus/chat/completions', query: { 'api-version': API_VERSION }, model: 'gpt4o-prod-eastus' });
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

  test('streaming without include_usage: no usage chunk reaches the client, though the gateway asked Azure for it', async () => {
    const stream = await client.chat.completions.create({ model: 'azure-chat', stream: true, messages: [{ role: 'user', content: 'Stream please' }] });
    let text = '';
    let usageChunks = 0;
    for await (const chunk of stream) {
      if (chunk.usage) usageChunks++;
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    expect(text).toBe('Switchyard routes this mock answer through one gateway with exact usage and');
    expect(usageChunks).toBe(0);
    const [upstream] = gw.mock.requests();
    expect(upstream).toMatchObject({ stream: true, includeUsage: true, query: { 'api-version': API_VERSION }, outcome: 'completed' });
    expect(upstream.body).not.toHaveProperty('model');
  });

  test('streaming with include_usage: exactly one final usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'azure-chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Usage please' }],
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.filter((c) => c.usage)).toHaveLength(1);
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 12 });
    expect(chunks.at(-1)!.choices).toEqual([]);
  });

  test('buffered tool call keeps the provider call id; tool_choice is passed through', async () => {
    const completion = await client.chat.completions.create({
      model: 'azure-chat', messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: [weatherTool], tool_choice: 'required',
    });
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(completion.choices[0].message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_mock_/), type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);
    const body = gw.mock.requests()[0].body as any;
    expect(body.tool_choice).toBe('required');
    // Azure takes the JSON Schema as OpenAI does: nothing is stripped.
    expect(body.tools[0].function.parameters.additionalProperties).toBe(false);
  });

  test('streamed tool call: id and name first, then argument deltas that assemble to JSON', async () => {
    const stream = await client.chat.completions.create({ model: 'azure-chat', stream: true, messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool] });
    let id = '';
    let name = '';
    let args = '';
    let pieces = 0;
    let finish = '';
    for await (const chunk of stream) {
      const call = chunk.choices[0]?.delta?.tool_calls?.[0];
      if (call?.id) id = call.id;
      if (call?.function?.name) name = call.function.name;
      if (call?.function?.arguments) pieces++;
      args += call?.function?.arguments ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(id).toMatch(/^call_mock_/);
    expect(name).toBe('get_weather');
    expect(pieces).toBeGreaterThan(1);
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    expect(finish).toBe('tool_calls');
  });

  test('multi-turn: the tool result is sent as a tool message with its call id', async () => {
    const completion = await client.chat.completions.create({
      model: 'azure-chat',
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
        { role: 'tool', tool_call_id: 'call_abc', content: '{"temperature":-3}' },
      ],
    });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect((gw.mock.requests()[0].body as any).messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_abc', content: '{"temperature":-3}' },
    ]);
  });

  test('JSON schema output is passed as response_format and the answer parses', async () => {
    const completion = await client.chat.completions.create({
      model: 'azure-chat',
      messages: [{ role: 'user', content: 'Capital of Norway' }],
      response_format: { type: 'json_schema', json_schema: { name: 'capital', strict: true, schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } },
    });
    expect(JSON.parse(completion.choices[0].message.content!)).toEqual({ city: 'Paris' });
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

  test('typed SDK errors: 401 for a bad gateway key, 404 for an unknown alias or a deployment name used as model', async () => {
    const stranger = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-sy-00000000000000000000000000000000', maxRetries: 0 });
    await expect(stranger.chat.completions.create({ model: 'azure-chat', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(client.chat.completions.create({ model: 'gpt4o-prod-eastus', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(gw.mock.requests()).toHaveLength(0);
  });

  test('an upstream 429: a typed 429 rate_limited with the retry-after Azure sent', async () => {
    gw.mock.addScenario({ model: 'gpt4o-prod-eastus', behaviour: { status: 429, retryAfterSeconds: 6 } });
    let error: unknown;
    try {
      await client.chat.completions.create({ model: 'azure-chat', messages: [{ role: 'user', content: 'x' }] });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    expect(apiError).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(apiError.headers?.get('retry-after')).toBe('6');
    expect(apiError.message).toMatch(/rate_limited/);
    expect(JSON.stringify(apiError.error)).not.toMatch(new RegExp(`${UPSTREAM_SECRET}|127\\.0\\.0\\.1|api-version`));
  });
});
