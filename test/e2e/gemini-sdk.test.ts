import { Decimal } from 'decimal.js';
import OpenAI from 'openai';
import type { AttemptFinished } from '../../events/request-events.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';

const UPSTREAM_SECRET = 'upstream-secret-value-123456';

/** Two Gemini deployments on the test's mock: one with vision and tools, one text-only. */
function geminiYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
  - id: google
    type: gemini
    baseUrl: ${mockUrl}
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:SY_TEST_UPSTREAM_KEY
deployments:
  - id: gemini-flash
    provider: google
    model: gemini-2.5-flash
    capabilities: [chat, streaming, tools, vision, json_object, json_schema]
    contextWindow: 1048576
    maxOutputTokens: 65536
    price: { inputPer1M: "0.30", outputPer1M: "2.50", cachedInputPer1M: "0.075" }
  - id: gemini-lite
    provider: google
    model: gemini-2.0-flash-lite
    capabilities: [chat, streaming]
    contextWindow: 1048576
    maxOutputTokens: 8192
    price: { inputPer1M: "0.075", outputPer1M: "0.30" }
aliases:
  - name: gemini
    routes:
      - { deployment: gemini-flash, priority: 0 }
  - name: gemini-text
    routes:
      - { deployment: gemini-lite, priority: 0 }
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
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    strict: true,
    parameters: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'integer' } },
      required: ['city', 'days'],
      additionalProperties: false,
    },
  },
};

/**
 * The official `openai` SDK against aliases served by a Gemini-type provider (the mock speaks Gemini):
 * the Gemini wire format (paths, key header, systemInstruction, generationConfig, schema conversion,
 * function calling), cached-token billing, refusals and mid-stream failures. The client-visible cases
 * (text, streaming with and without usage, tool calls, JSON schema, images, models, 401/404/429) are in
 * the conformance matrix (conformance-matrix.test.ts).
 */
describe('OpenAI SDK → Switchyard → Gemini API', () => {
  let gw: TestGateway;
  let client: OpenAI;
  const output: string[] = [];
  const writes = { out: process.stdout.write, err: process.stderr.write };

  beforeAll(async () => {
    // Capture (and hold back) everything the gateway prints at its most verbose level: no provider key may appear in it.
    for (const stream of [process.stdout, process.stderr]) {
      stream.write = ((chunk: string | Uint8Array) => {
        output.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        return true;
      }) as typeof stream.write;
    }
    gw = await startTestGateway({ yaml: geminiYaml, environment: { logLevel: 'debug' } });
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

  test('buffered chat: generateContent with x-goog-api-key, systemInstruction, generationConfig; exact cost', async () => {
    await client.chat.completions.create({
      model: 'gemini',
      messages: [
        { role: 'system', content: 'You are a concise assistant.' },
        { role: 'user', content: 'Say hello' },
      ],
      temperature: 0.3,
      top_p: 0.8,
      max_tokens: 100,
      stop: ['END'],
    });
    const [upstream] = gw.mock.requests();
    expect(upstream).toMatchObject({ path: '/v1beta/models/gemini-2.5-flash:generateContent' });
    expect(upstream.headers['x-goog-api-key']).toMatch(/^upst\*\*\*56$/);
    expect(upstream.headers.authorization).toBeUndefined();
    expect(upstream.query).toEqual({});
    expect(upstream.body).toEqual({
      systemInstruction: { parts: [{ text: 'You are a concise assistant.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }],
      generationConfig: { temperature: 0.3, topP: 0.8, maxOutputTokens: 100, stopSequences: ['END'] },
    });

    const requestId = (await client.chat.completions.create({ model: 'gemini', messages: [{ role: 'user', content: 'Say hello' }] }).withResponse()).response.headers.get('x-request-id')!;
    const attempt = (await gw.requestEvents(requestId)).find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];
    expect(attempt).toMatchObject({ outcome: 'success', deploymentId: 'gemini-flash', providerId: 'google', usageEvidence: 'provider' });
    expect(attempt.providerRequestId).toMatch(/^mock-/);
    const input = attempt.usage.input;
    expect(attempt.usage).toEqual({ input, cachedInput: 0, cacheWrite: 0, output: 12, reasoning: 0 });
    // By hand: input at $0.30/1M, 12 output tokens at $2.50/1M.
    expect(attempt.cost.total).toBe(new Decimal(input).times('0.30').plus(new Decimal(12).times('2.50')).div(1_000_000).toFixed(12));
  });

  test('cachedContentTokenCount is billed at the cached price and shown as cached_tokens', async () => {
    gw.mock.addScenario({ model: 'gemini-2.5-flash', times: 1, behaviour: { cachedTokens: 3 } });
    const { data: completion, response } = await client.chat.completions
      .create({ model: 'gemini', messages: [{ role: 'user', content: 'A prompt long enough to have a few cached tokens in it' }] })
      .withResponse();
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(3);
    const prompt = completion.usage!.prompt_tokens;
    const attempt = (await gw.requestEvents(response.headers.get('x-request-id')!)).find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];
    expect(attempt.usage).toEqual({ input: prompt, cachedInput: 3, cacheWrite: 0, output: 12, reasoning: 0 });
    const expected = new Decimal(prompt - 3).times('0.30').plus(new Decimal(3).times('0.075')).plus(new Decimal(12).times('2.50')).div(1_000_000);
    expect(attempt.cost.total).toBe(expected.toFixed(12));
  });

  test('streaming: streamGenerateContent?alt=sse with an event-stream accept header', async () => {
    const stream = await client.chat.completions.create({ model: 'gemini', stream: true, messages: [{ role: 'user', content: 'Stream please' }] });
    for await (const chunk of stream) void chunk;
    const [upstream] = gw.mock.requests();
    expect(upstream).toMatchObject({ path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent', query: { alt: 'sse' }, stream: true, outcome: 'completed' });
    expect(upstream.headers.accept).toBe('text/event-stream');
  });

  test('buffered tool call: a functionDeclaration Gemini accepts, toolConfig ANY for a forced tool, call_0 back', async () => {
    const completion = await client.chat.completions.create({
      model: 'gemini',
      messages: [{ role: 'user', content: 'Weather in Paris for 3 days?' }],
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    const choice = completion.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toEqual([{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","days":42}' } }]);
    const body = gw.mock.requests()[0].body as any;
    // The mock, like Gemini, rejects additionalProperties and $schema: the request got through, so they were stripped.
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Current weather for a city',
            parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' }, days: { type: 'INTEGER' } }, required: ['city', 'days'] },
          },
        ],
      },
    ]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } });
  });

  test('streamed tool call with tool_choice auto: no toolConfig is sent (Gemini defaults to AUTO)', async () => {
    const stream = await client.chat.completions.create({
      model: 'gemini', stream: true, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherTool],
    });
    let finish = '';
    for await (const chunk of stream) finish = chunk.choices[0]?.finish_reason ?? finish;
    expect(finish).toBe('tool_calls');
    expect((gw.mock.requests()[0].body as any).toolConfig).toBeUndefined();
  });

  test('multi-turn: the tool result goes back as a functionResponse named after the call', async () => {
    await client.chat.completions.create({
      model: 'gemini',
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","days":1}' } }] },
        { role: 'tool', tool_call_id: 'call_0', content: '{"temperature":21,"sky":"clear"}' },
      ],
    });
    expect((gw.mock.requests()[0].body as any).contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris', days: 1 } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temperature: 21, sky: 'clear' } } }] },
    ]);
  });

  test('JSON schema output: responseMimeType + a responseSchema Gemini accepts; the answer parses', async () => {
    const completion = await client.chat.completions.create({
      model: 'gemini',
      messages: [{ role: 'user', content: 'Capital of France as JSON' }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'capital',
          strict: true,
          schema: { type: 'object', properties: { city: { type: 'string' }, population: { type: ['integer', 'null'] } }, required: ['city', 'population'], additionalProperties: false },
        },
      },
    });
    expect(JSON.parse(completion.choices[0].message.content!)).toEqual({ city: 'Paris', population: 42 });
    expect((gw.mock.requests()[0].body as any).generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseSchema: { type: 'OBJECT', properties: { city: { type: 'STRING' }, population: { type: 'INTEGER', nullable: true } }, required: ['city', 'population'] },
    });
  });

  test('an image part goes inline to a deployment that declares vision, and is refused by one that does not', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const content: OpenAI.Chat.Completions.ChatCompletionContentPart[] = [
      { type: 'text', text: 'What is in this image?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'low' } },
    ];
    const completion = await client.chat.completions.create({ model: 'gemini', messages: [{ role: 'user', content }] });
    expect(completion.choices[0].message.content).toBeTruthy();
    expect((gw.mock.requests()[0].body as any).contents[0].parts).toEqual([
      { text: 'What is in this image?' },
      { inlineData: { mimeType: 'image/png', data: png } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.jpg' } },
    ]);

    gw.mock.clearRequests();
    const refused = client.chat.completions.create({ model: 'gemini-text', messages: [{ role: 'user', content }] });
    await expect(refused).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(refused).rejects.toMatchObject({ status: 400, code: 'unsupported_parameter' });
    expect(gw.mock.requests()).toHaveLength(0);
  });

  test('parallel_tool_calls: false cannot be honoured by Gemini and is refused, not dropped', async () => {
    const refused = client.chat.completions.create({ model: 'gemini', messages: [{ role: 'user', content: 'x' }], tools: [weatherTool], parallel_tool_calls: false });
    await expect(refused).rejects.toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'parallel_tool_calls' });
    expect(gw.mock.requests()).toHaveLength(0);
  });

  test('a malformed frame after the first output ends the stream with an error, not a clean stop', async () => {
    gw.mock.addScenario({ model: 'gemini-2.5-flash', times: 1, behaviour: { malformedAfterChunks: 4 } });
    const stream = await client.chat.completions.create({ model: 'gemini', stream: true, messages: [{ role: 'user', content: 'x' }] });
    let text = '';
    await expect(
      (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      })(),
    ).rejects.toBeInstanceOf(OpenAI.APIError);
    expect(text).toBe('Switchyard routes this mock');
    expect(gw.mock.requests()).toHaveLength(1); // no retry once output reached the client
  });
});
