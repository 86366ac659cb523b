import { GeminiAdapter, geminiPath } from '../../modules/providers/gemini/gemini-adapter.js';
import { FixtureServer, chatRequest, collect, fixtureBytes, fold, randomChunks, resolvedDeployment, seededRandom } from '../support/provider-fixtures.js';
import { believedUsage } from '../support/believed-usage.js';

describe('Gemini adapter over HTTP', () => {
  let server: FixtureServer;
  const adapter = new GeminiAdapter();
  const deployment = resolvedDeployment('gemini', { model: 'gemini-2.5-flash' });

  beforeAll(async () => {
    server = await new FixtureServer().start();
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.seen.length = 0;
  });

  test('buffered: POST {base}/v1beta/models/{model}:generateContent with x-goog-api-key, no bearer, no key in the URL', async () => {
    server.reply({ headers: { 'content-type': 'application/json' }, chunks: [fixtureBytes('gemini', 'generate-content-text.json')] });
    const request = chatRequest({ temperature: 0.5, messages: [{ role: 'system', content: [{ type: 'text', text: 'Be brief.' }] }, { role: 'user', content: [{ type: 'text', text: 'Explain AI' }] }] });
    const response = await adapter.chat(server.call(request, deployment, '/gemini-proxy/'));
    expect(response.choices[0].text).toMatch(/^AI learns patterns/);
    expect(believedUsage(response.usage)).toEqual({ input: 8, cachedInput: 0, cacheWrite: 0, output: 1087, reasoning: 1070 });
    const [seen] = server.seen;
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/gemini-proxy/v1beta/models/gemini-2.5-flash:generateContent');
    expect(seen.headers['x-goog-api-key']).toBe('upstream-secret-value-123456');
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.body).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Explain AI' }] }],
      generationConfig: { temperature: 0.5 },
    });
  });

  test('streaming: :streamGenerateContent?alt=sse, translated correctly whatever the chunk boundaries on the wire', async () => {
    const bytes = fixtureBytes('gemini', 'stream-function-call.sse');
    for (const seed of [1, 2, 3, 4, 5]) {
      server.reply({ headers: { 'content-type': 'text/event-stream' }, chunks: randomChunks(bytes, seededRandom(seed), 12).map((c) => Buffer.from(c)) });
      const stream = await adapter.chatStream(server.call(chatRequest({ stream: true }), deployment));
      const events = await collect(stream.events);
      expect(fold(events)).toEqual({
        text: 'Checking the weather',
        calls: [
          { id: 'call_0', name: 'get_current_weather', arguments: '{"location":"Zürich","unit":"celsius"}' },
          { id: 'call_1', name: 'get_local_time', arguments: '{"timezone":"Europe/Zurich"}' },
        ],
        finish: 'tool_calls',
        usage: { input: 71, cachedInput: 0, cacheWrite: 0, output: 31, reasoning: 0 },
      });
      expect(stream.providerRequestId).toBe('sTrEaMfN06');
    }
    expect(server.seen.map((s) => s.url)).toEqual(Array(5).fill('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'));
    expect(server.seen[0].headers.accept).toBe('text/event-stream');
  });

  test('HTTP errors are typed, with the retry delay Google puts in the body', async () => {
    server.reply({ status: 429, headers: { 'content-type': 'application/json' }, chunks: [fixtureBytes('gemini', 'error-429.json')] });
    await expect(adapter.chat(server.call(chatRequest(), deployment))).rejects.toMatchObject({ errorClass: 'rate_limited', httpStatus: 429, retryAfterMs: 37_000 });
    server.reply({ status: 400, chunks: [fixtureBytes('gemini', 'error-400-api-key.json')] });
    await expect(adapter.chatStream(server.call(chatRequest({ stream: true }), deployment))).rejects.toMatchObject({ errorClass: 'auth' });
  });

  test('a body that is not JSON is a malformed response', async () => {
    server.reply({ headers: { 'content-type': 'application/json' }, chunks: [Buffer.from('{"candidates": [')] });
    await expect(adapter.chat(server.call(chatRequest(), deployment))).rejects.toMatchObject({ errorClass: 'malformed_response' });
  });

  test('a stream cut inside a frame is a malformed response', async () => {
    const bytes = fixtureBytes('gemini', 'stream-text.sse');
    server.reply({ headers: { 'content-type': 'text/event-stream' }, chunks: [bytes.subarray(0, bytes.length - 40)] });
    const stream = await adapter.chatStream(server.call(chatRequest({ stream: true }), deployment));
    await expect(collect(stream.events)).rejects.toMatchObject({ errorClass: 'malformed_response' });
  });

  test('a request Gemini cannot take is refused before any call, naming the parameter', async () => {
    expect(adapter.unsupportedParameter(chatRequest({ n: 2 }), deployment)).toBe('n');
    expect(adapter.unsupportedParameter(chatRequest({ n: 2 }), resolvedDeployment('gemini', { capabilities: ['chat', 'n'] }))).toBeNull();
    expect(adapter.unsupportedParameter(chatRequest({ parallelToolCalls: false }), deployment)).toBe('parallel_tool_calls');
    expect(adapter.unsupportedParameter(chatRequest({ parallelToolCalls: true }), deployment)).toBeNull();
    expect(adapter.unsupportedParameter(chatRequest({ stop: ['1', '2', '3', '4', '5', '6'] }), deployment)).toBe('stop');
    const orphan = chatRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }, { role: 'tool', toolCallId: 'call_3', content: [] }] });
    expect(adapter.unsupportedParameter(orphan, deployment)).toBe('messages');
    const recursive = chatRequest({
      tools: [{ name: 'tree', description: null, strict: null, parameters: { $defs: { n: { type: 'object', properties: { c: { $ref: '#/$defs/n' } } } }, $ref: '#/$defs/n' } }],
    });
    expect(adapter.unsupportedParameter(recursive, deployment)).toBe('tools');
    // Had it been sent anyway, it fails as a client problem without reaching the provider.
    await expect(adapter.chat(server.call(recursive, deployment))).rejects.toMatchObject({ errorClass: 'invalid_request' });
    expect(server.seen).toHaveLength(0);
  });

  test('paths: model ids, full resource names, tuned models, the v1 API version', () => {
    expect(geminiPath(resolvedDeployment('gemini', { model: 'gemini-2.0-flash' }), false)).toBe('/v1beta/models/gemini-2.0-flash:generateContent');
    expect(geminiPath(resolvedDeployment('gemini', { model: 'models/gemini-2.0-flash', apiVersion: 'v1' }), true)).toBe('/v1/models/gemini-2.0-flash:streamGenerateContent?alt=sse');
    expect(geminiPath(resolvedDeployment('gemini', { model: 'tunedModels/my-model-7' }), false)).toBe('/v1beta/tunedModels/my-model-7:generateContent');
    expect(geminiPath(resolvedDeployment('gemini', { model: 'odd name?x' }), false)).toBe('/v1beta/models/odd%20name%3Fx:generateContent');
  });
});
