import OpenAI from 'openai';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';

/** The official `openai` package, pointed at Switchyard by base URL and key only. */
describe('OpenAI SDK against Switchyard', () => {
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gw = await startTestGateway();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  test('chat.completions.create (buffered) returns the alias as model, with usage', async () => {
    const completion = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'Say hello' }] });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('chat');
    expect(completion.choices[0].message.content).toMatch(/^Switchyard routes/);
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({ completion_tokens: 12, total_tokens: completion.usage!.prompt_tokens + 12 });
    const upstream = gw.mock.requests();
    expect(upstream).toHaveLength(1);
    expect(upstream[0].model).toBe('model-primary');
    expect(upstream[0].headers.authorization).toMatch(/^Bear\*\*\*/);
  });

  test('streaming without include_usage: no usage chunk reaches the client, though the gateway asked upstream', async () => {
    const stream = await client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'Stream please' }] });
    let text = '';
    let usageChunks = 0;
    let finish: string | null = null;
    for await (const chunk of stream) {
      if (chunk.usage) usageChunks++;
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe('Switchyard routes this mock answer through one gateway with exact usage and');
    expect(finish).toBe('stop');
    expect(usageChunks).toBe(0);
    expect(gw.mock.requests()[0].includeUsage).toBe(true);
  });

  test('streaming with include_usage: one final usage chunk with empty choices', async () => {
    const stream = await client.chat.completions.create({
      model: 'chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Usage please' }],
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ completion_tokens: 12 });
    expect(chunks.filter((c) => c.usage)).toHaveLength(1);
  });

  test('models.list shows the aliases the key may use, never deployments', async () => {
    const models = [];
    for await (const model of client.models.list()) models.push(model.id);
    expect(models.sort()).toEqual(['chat', 'solo']);
    const one = await client.models.retrieve('chat');
    expect(one.id).toBe('chat');
    await expect(client.models.retrieve('primary')).rejects.toMatchObject({ status: 404 });
  });

  test('typed SDK errors: 401 for a bad key, 404 for an unknown alias', async () => {
    const stranger = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-sy-00000000000000000000000000000000', maxRetries: 0 });
    await expect(stranger.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
    await expect(client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  });

  test('streamed tool calls keep ids, names and argument deltas', async () => {
    const stream = await client.chat.completions.create({
      model: 'chat',
      stream: true,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }],
    });
    let id = '';
    let name = '';
    let args = '';
    let finish = '';
    for await (const chunk of stream) {
      const call = chunk.choices[0]?.delta?.tool_calls?.[0];
      if (call?.id) id = call.id;
      if (call?.function?.name) name = call.function.name;
      args += call?.function?.arguments ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(id).toMatch(/^call_mock_/);
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    expect(finish).toBe('tool_calls');
  });
});
