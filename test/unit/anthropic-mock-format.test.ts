import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { AnthropicStreamTranslator } from '../../modules/providers/anthropic/anthropic-stream.js';
import { fromAnthropicMessage } from '../../modules/providers/anthropic/anthropic-response.js';
import { SseDecoder } from '../../modules/providers/streaming/sse-decoder.js';
import type { StreamEvent } from '../../modules/canonical/chat-response.js';
import { believedUsage, withBelievedUsage } from '../support/believed-usage.js';

const headers = { 'content-type': 'application/json', 'x-api-key': 'test-key-123456', 'anthropic-version': '2023-06-01' };
const body = { model: 'claude-mock', max_tokens: 100, messages: [{ role: 'user', content: 'Tell me about the gateway' }] };

/** The mock provider's Anthropic dialect, read back with the real adapter's parsers. */
describe('mock provider speaks Anthropic', () => {
  let mock: MockProviderServer;
  let url: string;
  beforeAll(async () => {
    mock = new MockProviderServer();
    url = await mock.listen(0);
  });
  afterAll(async () => {
    await mock.close();
  });
  beforeEach(() => mock.clearScenarios());

  const post = (payload: unknown, extra: Record<string, string> = {}) =>
    fetch(`${url}/v1/messages`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(payload) });

  test('buffered, with cached tokens: input_tokens excludes cache reads, as Anthropic reports it', async () => {
    mock.addScenario({ behaviour: { cachedTokens: 5 } });
    const response = await post(body);
    expect(response.status).toBe(200);
    const json = (await response.json()) as { usage: Record<string, number> };
    const canonical = fromAnthropicMessage(json);
    expect(json.usage.cache_read_input_tokens).toBe(5);
    expect(believedUsage(canonical.usage)).toEqual({ input: json.usage.input_tokens + 5, cachedInput: 5, cacheWrite: 0, output: 12, reasoning: 0 });
  });

  test('streamed tool use: input_json_delta pieces and usage with cache reads in message_start', async () => {
    mock.addScenario({ behaviour: { cachedTokens: 2, chunks: 4 } });
    const response = await post({ ...body, stream: true, tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }] });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const decoder = new SseDecoder();
    const translator = new AnthropicStreamTranslator();
    const events: StreamEvent[] = [];
    for (const frame of [...decoder.push(new Uint8Array(await response.arrayBuffer())), ...decoder.end()]) events.push(...translator.translate(frame));
    translator.end();
    const calls = events.filter((e) => e.type === 'tool_call');
    expect(calls[0]).toMatchObject({ id: expect.stringMatching(/^toolu_mock_\d+$/), name: 'lookup' });
    expect(calls.length).toBeGreaterThan(2);
    expect(JSON.parse(calls.map((c) => (c.type === 'tool_call' ? c.arguments : '')).join(''))).toEqual({ q: 'Paris' });
    expect(events.find((e) => e.type === 'finish')).toMatchObject({ stopReason: 'tool_calls' });
    expect(withBelievedUsage(events.find((e) => e.type === 'usage'))).toMatchObject({ usage: { cachedInput: 2, output: calls.length - 1 } });
  });

  test('errors come in the Anthropic envelope; a call without x-api-key or anthropic-version is refused', async () => {
    mock.addScenario({ behaviour: { status: 429, retryAfterSeconds: 3 } });
    const limited = await post(body);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(await limited.json()).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: expect.any(String) } });
    mock.clearScenarios();
    const noKey = await post(body, { 'x-api-key': '' });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ error: { type: 'authentication_error' } });
    const noVersion = await fetch(`${url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k-123456789' }, body: JSON.stringify(body) });
    expect(noVersion.status).toBe(400);
    const noMaxTokens = await post({ model: 'claude-mock', messages: body.messages });
    expect(noMaxTokens.status).toBe(400);
    expect(await noMaxTokens.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } });
  });

  test('an in-stream failure is an `event: error` frame that the translator turns into a ProviderError', async () => {
    mock.addScenario({ behaviour: { errorAfterChunks: 2 } });
    const text = await (await post({ ...body, stream: true })).text();
    expect(text).toContain('event: error\ndata: {"type":"error","error":{"type":"overloaded_error"');
    const translator = new AnthropicStreamTranslator();
    const decoder = new SseDecoder();
    expect(() => {
      for (const frame of [...decoder.push(Buffer.from(text)), ...decoder.end()]) translator.translate(frame);
    }).toThrow(expect.objectContaining({ errorClass: 'overloaded' }));
  });
});
