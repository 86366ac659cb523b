import { mockThoughtSignature } from '../../modules/providers/mock/gemini-mock-format.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { SseDecoder } from '../../modules/providers/streaming/sse-decoder.js';

/**
 * The mock must refuse what the real Gemini API refuses, or the e2e tests of the adapter's mapping
 * would pass against requests production rejects.
 */
describe('mock provider: Gemini dialect', () => {
  let mock: MockProviderServer;
  let url: string;
  const key = { 'x-goog-api-key': 'test-key-0123456789' };
  const hello = { contents: [{ role: 'user', parts: [{ text: 'Hello there' }] }] };

  beforeAll(async () => {
    mock = new MockProviderServer();
    url = await mock.listen(0);
  });
  afterAll(async () => {
    await mock.close();
  });
  beforeEach(() => {
    mock.clearScenarios();
    mock.clearRequests();
  });

  async function post(path: string, body: unknown, headers: Record<string, string> = key) {
    const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, json: (() => { try { return JSON.parse(text); } catch { return null; } })() };
  }

  test('generateContent answers a GenerateContentResponse with usageMetadata and the key masked in the log', async () => {
    const response = await post('/v1beta/models/gemini-2.5-flash:generateContent', hello);
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({
      candidates: [{ content: { role: 'model', parts: [{ text: expect.stringMatching(/^Switchyard routes/) }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: expect.any(Number), candidatesTokenCount: 12 },
      modelVersion: 'gemini-2.5-flash',
    });
    expect(response.json.usageMetadata).not.toHaveProperty('cachedContentTokenCount');
    expect(mock.requests()[0]).toMatchObject({ format: 'gemini', model: 'gemini-2.5-flash', headers: { 'x-goog-api-key': 'test***89' } });
  });

  test('cachedContentTokenCount appears when the scenario caches tokens', async () => {
    mock.addScenario({ behaviour: { cachedTokens: 2 } });
    const response = await post('/v1beta/models/m:generateContent', hello);
    expect(response.json.usageMetadata.cachedContentTokenCount).toBe(2);
  });

  test('streamGenerateContent?alt=sse: CRLF-framed responses, a whole functionCall, finish and usage last', async () => {
    const tools = [{ functionDeclarations: [{ name: 'lookup', parameters: { type: 'OBJECT', properties: { q: { type: 'STRING' }, n: { type: 'INTEGER' } } } }] }];
    const response = await post('/v1beta/models/m:streamGenerateContent?alt=sse', { ...hello, tools });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.text).toContain('\r\n\r\n');
    const frames = new SseDecoder().push(Buffer.from(response.text)).map((f) => JSON.parse(f.data));
    const calls = frames.flatMap((f) => f.candidates[0].content.parts.filter((p: any) => p.functionCall));
    expect(calls).toEqual([{ functionCall: { name: 'lookup', args: { q: 'Paris', n: 42 } } }]);
    expect(frames.at(-1)).toMatchObject({ candidates: [{ finishReason: 'STOP' }], usageMetadata: { candidatesTokenCount: expect.any(Number) } });
    expect(mock.requests()[0]).toMatchObject({ stream: true, query: { alt: 'sse' } });
  });

  test.each([
    ['no alt=sse on a stream', '/v1beta/models/m:streamGenerateContent', hello, /alt=sse/],
    ['an OpenAI-style body', '/v1beta/models/m:generateContent', { messages: [{ role: 'user', content: 'x' }] }, /Unknown name "messages"/],
    ['role assistant', '/v1beta/models/m:generateContent', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, /valid role/],
    ['empty parts', '/v1beta/models/m:generateContent', { contents: [{ role: 'user', parts: [] }] }, /must not be empty/],
    ['two kinds in one part', '/v1beta/models/m:generateContent', { contents: [{ role: 'user', parts: [{ text: 'x', inlineData: { mimeType: 'image/png', data: 'AA==' } }] }] }, /oneof/],
    ['additionalProperties in a declaration', '/v1beta/models/m:generateContent', { ...hello, tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'OBJECT', properties: { a: { type: 'STRING' } }, additionalProperties: false } }] }] }, /Unknown name "additionalProperties"/],
    ['an OBJECT with empty properties', '/v1beta/models/m:generateContent', { ...hello, tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'OBJECT', properties: {} } }] }] }, /non-empty/],
    ['$schema in responseSchema', '/v1beta/models/m:generateContent', { ...hello, generationConfig: { responseMimeType: 'application/json', responseSchema: { $schema: 'x', type: 'OBJECT' } } }, /Unknown name "\$schema"/],
    ['max_tokens in generationConfig', '/v1beta/models/m:generateContent', { ...hello, generationConfig: { max_tokens: 5 } }, /Unknown name "max_tokens"/],
    ['a functionResponse without a response object', '/v1beta/models/m:generateContent', { contents: [{ role: 'user', parts: [{ functionResponse: { name: 'f', response: 'text' } }] }] }, /function_response/],
  ])('refuses %s with 400 INVALID_ARGUMENT', async (_name, path, body, message) => {
    const response = await post(path, body);
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: expect.stringMatching(message) });
  });

  test('a call without x-goog-api-key is refused with 403 PERMISSION_DENIED', async () => {
    const response = await post('/v1beta/models/m:generateContent', hello, {});
    expect(response.status).toBe(403);
    expect(response.json.error).toMatchObject({ code: 403, status: 'PERMISSION_DENIED' });
  });

  test('injected failures use Google\'s envelope; a 429 carries RetryInfo', async () => {
    mock.addScenario({ times: 1, behaviour: { status: 429, retryAfterSeconds: 9 } });
    const limited = await post('/v1beta/models/m:generateContent', hello);
    expect(limited.status).toBe(429);
    expect(limited.json.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '9s' }] });
    mock.addScenario({ times: 1, behaviour: { status: 503 } });
    expect((await post('/v1beta/models/m:generateContent', hello)).json.error).toMatchObject({ code: 503, status: 'UNAVAILABLE' });
  });

  describe('thought signatures (thinking on), as Gemini 3 checks them', () => {
    const tools = [{ functionDeclarations: [{ name: 'lookup', parameters: { type: 'OBJECT', properties: { q: { type: 'STRING' }, n: { type: 'INTEGER' } } } }] }];
    const thinking = { generationConfig: { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } } };
    const signature = mockThoughtSignature('lookup', { q: 'Paris', n: 42 });
    const continuation = (call: Record<string, unknown>) => ({
      ...thinking, tools,
      contents: [
        { role: 'user', parts: [{ text: 'Look it up' }] },
        { role: 'model', parts: [call] },
        { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { output: 'found' } } }] },
      ],
    });

    test('function calls come signed, buffered and streamed; without thinking they are not', async () => {
      const buffered = await post('/v1beta/models/m:generateContent', { ...hello, ...thinking, tools });
      const parts = buffered.json.candidates[0].content.parts;
      expect(parts.find((p: any) => p.functionCall)).toEqual({ functionCall: { name: 'lookup', args: { q: 'Paris', n: 42 } }, thoughtSignature: signature });
      const streamed = await post('/v1beta/models/m:streamGenerateContent?alt=sse', { ...hello, ...thinking, tools });
      const frames = new SseDecoder().push(Buffer.from(streamed.text)).map((f) => JSON.parse(f.data));
      expect(frames.flatMap((f) => f.candidates[0].content.parts.filter((p: any) => p.functionCall))).toEqual([{ functionCall: { name: 'lookup', args: { q: 'Paris', n: 42 } }, thoughtSignature: signature }]);
      const plain = await post('/v1beta/models/m:generateContent', { ...hello, tools });
      expect(plain.json.candidates[0].content.parts[0]).not.toHaveProperty('thoughtSignature');
    });

    test('a continuation with the signature is answered; without it or with another one it is a 400', async () => {
      const signed = await post('/v1beta/models/m:generateContent', continuation({ functionCall: { name: 'lookup', args: { q: 'Paris', n: 42 } }, thoughtSignature: signature }));
      expect(signed.status).toBe(200);
      const missing = await post('/v1beta/models/m:generateContent', continuation({ functionCall: { name: 'lookup', args: { q: 'Paris', n: 42 } } }));
      expect(missing.status).toBe(400);
      expect(missing.json.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('is missing a `thought_signature`') });
      const altered = await post('/v1beta/models/m:generateContent', continuation({ functionCall: { name: 'lookup', args: { q: 'Rome', n: 42 } }, thoughtSignature: signature }));
      expect(altered.status).toBe(400);
      expect(altered.json.error.message).toContain('invalid `thought_signature`');
      // Without thinking there is nothing to check, as with Gemini 2.5 and thinking off.
      const { generationConfig: _unused, ...noThinking } = continuation({ functionCall: { name: 'lookup', args: { q: 'Paris', n: 42 } } });
      expect((await post('/v1beta/models/m:generateContent', noThinking)).status).toBe(200);
    });
  });
});

describe('mock provider: Azure OpenAI paths', () => {
  let mock: MockProviderServer;
  let url: string;
  const body = { messages: [{ role: 'user', content: 'Hello' }] };

  beforeAll(async () => {
    mock = new MockProviderServer();
    url = await mock.listen(0);
  });
  afterAll(async () => {
    await mock.close();
  });

  const post = (path: string, headers: Record<string, string>) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  test('the deployment in the path is the model; api-version is recorded', async () => {
    const response = await post('/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21', { 'api-key': 'azure-key-0123456789' });
    expect(response.status).toBe(200);
    expect(mock.requests().at(-1)).toMatchObject({ model: 'my-gpt4o', query: { 'api-version': '2024-10-21' }, headers: { 'api-key': 'azur***89' } });
  });

  test('no api-key (and no bearer token) → 401; no api-version → 400', async () => {
    expect((await post('/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21', {})).status).toBe(401);
    expect((await post('/openai/deployments/my-gpt4o/chat/completions', { 'api-key': 'k' })).status).toBe(400);
  });
});
