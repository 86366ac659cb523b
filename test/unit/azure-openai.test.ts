import type { PriceTable } from '../../events/price-events.js';
import { attemptCost } from '../../modules/inference/pricing/attempt-cost.js';
import { azureOpenAiDialect } from '../../modules/providers/azure-openai/azure-openai-dialect.js';
import { OpenAiAdapter } from '../../modules/providers/openai/openai-adapter.js';
import { ProviderAdapters } from '../../modules/providers/provider-adapters.js';
import { FixtureServer, chatRequest, collect, fixtureBytes, fold, resolvedDeployment } from '../support/provider-fixtures.js';
import { believedUsage } from '../support/believed-usage.js';

/** o3-mini list prices (USD per 1M tokens). */
const o3mini: PriceTable = { inputPer1M: '1.10', outputPer1M: '4.40', cachedInputPer1M: '0.55', cacheWritePer1M: null, reasoningPer1M: null, currency: 'USD' };

describe('Azure OpenAI adapter over HTTP', () => {
  let server: FixtureServer;
  const adapter = new OpenAiAdapter(azureOpenAiDialect);
  const deployment = resolvedDeployment('azure-openai', { model: 'o3-mini-prod-eastus', apiVersion: '2024-10-21' });
  const json = { 'content-type': 'application/json' };

  beforeAll(async () => {
    server = await new FixtureServer().start();
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.seen.length = 0;
  });

  test('is the adapter registered for type azure-openai', () => {
    expect(new ProviderAdapters().for('azure-openai')).toBeInstanceOf(OpenAiAdapter);
  });

  test('buffered: deployment and api-version in the URL, api-key header, no model in the body, max_completion_tokens', async () => {
    server.reply({ headers: json, chunks: [fixtureBytes('azure-openai', 'chat-completion.json')] });
    const response = await adapter.chat(server.call(chatRequest({ maxOutputTokens: 500, temperature: 1 }), deployment));
    const [seen] = server.seen;
    expect(seen.url).toBe('/openai/deployments/o3-mini-prod-eastus/chat/completions?api-version=2024-10-21');
    expect(seen.headers['api-key']).toBe('upstream-secret-value-123456');
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.body).toEqual({ messages: [{ role: 'user', content: 'Hello' }], max_completion_tokens: 500, temperature: 1 });
    expect({ ...response, usage: believedUsage(response.usage) }).toEqual({
      providerRequestId: 'chatcmpl-AzUre0000000000000000000001',
      choices: [{ index: 0, text: 'Paris is the capital of France.', toolCalls: [], stopReason: 'stop', reasoning: [], logprobs: null }],
      usage: { input: 2048, cachedInput: 1024, cacheWrite: 0, output: 600, reasoning: 448 },
    });
    // By hand: 1024 × 1.10 + 1024 × 0.55 + 600 × 4.40 = 1126.4 + 563.2 + 2640 = 4329.6 per 1M
    expect(attemptCost(believedUsage(response.usage), o3mini)).toMatchObject({ input: '0.001126400000', cachedInput: '0.000563200000', output: '0.002640000000', total: '0.004329600000' });
  });

  test('a base URL with a path prefix keeps it, and odd deployment names are encoded', async () => {
    server.reply({ headers: json, chunks: [fixtureBytes('azure-openai', 'chat-completion.json')] });
    await adapter.chat(server.call(chatRequest(), resolvedDeployment('azure-openai', { model: 'gpt 4o/eu', apiVersion: '2025-01-01-preview' }), '/azure/'));
    expect(server.seen[0].url).toBe('/azure/openai/deployments/gpt%204o%2Feu/chat/completions?api-version=2025-01-01-preview');
  });

  test('an answer withheld by the content filter has stop reason content_filter', async () => {
    server.reply({ headers: json, chunks: [fixtureBytes('azure-openai', 'chat-completion-content-filtered.json')] });
    const response = await adapter.chat(server.call(chatRequest(), deployment));
    expect(response.choices).toEqual([{ index: 0, text: '', toolCalls: [], stopReason: 'content_filter', reasoning: [], logprobs: null }]);
  });

  test('streaming: the opening prompt_filter_results chunk (empty id, no choices) is harmless; the real id is kept', async () => {
    server.reply({ headers: { 'content-type': 'text/event-stream' }, chunks: [fixtureBytes('azure-openai', 'stream.sse')] });
    const stream = await adapter.chatStream(server.call(chatRequest({ stream: true }), deployment));
    const events = await collect(stream.events);
    expect(fold(events)).toEqual({
      text: 'Bonjour — café crème ☕ 東京!',
      calls: [],
      finish: 'stop',
      usage: { input: 20, cachedInput: 0, cacheWrite: 0, output: 9, reasoning: 0 },
    });
    expect(stream.providerRequestId).toBe('chatcmpl-AzUreStream000000000000000003');
    expect(server.seen[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(server.seen[0].body).not.toHaveProperty('model');
  });

  test('streamed tool calls assemble from argument pieces', async () => {
    server.reply({ headers: { 'content-type': 'text/event-stream' }, chunks: [fixtureBytes('azure-openai', 'stream-tool-call.sse')] });
    const stream = await adapter.chatStream(server.call(chatRequest({ stream: true }), deployment));
    expect(fold(await collect(stream.events))).toMatchObject({
      calls: [{ id: 'call_AzUreToolCall01', name: 'get_current_weather', arguments: '{"location": "München", "unit": "celsius"}' }],
      finish: 'tool_calls',
    });
  });

  test('output filtered mid-stream ends with finish_reason content_filter', async () => {
    server.reply({ headers: { 'content-type': 'text/event-stream' }, chunks: [fixtureBytes('azure-openai', 'stream-content-filter.sse')] });
    const stream = await adapter.chatStream(server.call(chatRequest({ stream: true }), deployment));
    expect(fold(await collect(stream.events))).toMatchObject({ text: 'The first part of the story', finish: 'content_filter' });
  });

  test.each([
    ['error-content-filter.json', 400, {}, 'content_policy', null],
    ['error-429.json', 429, { 'retry-after': '6' }, 'rate_limited', 6000],
    ['error-context-length.json', 400, {}, 'context_length', null],
    ['error-401.json', 401, {}, 'auth', null],
    ['error-404-deployment.json', 404, {}, 'invalid_request', null],
  ])('%s (HTTP %i) → %s', async (file, status, headers, errorClass, retryAfterMs) => {
    server.reply({ status, headers: { ...json, ...headers }, chunks: [fixtureBytes('azure-openai', file)] });
    const failure = adapter.chat(server.call(chatRequest(), deployment));
    await expect(failure).rejects.toMatchObject({ errorClass, httpStatus: status, retryAfterMs });
    // The sanitised message never carries a URL from the provider's body.
    await failure.catch((error: Error) => expect(error.message).not.toMatch(/https?:/));
  });

  test('content_policy is final: no fallback to another route for a filtered prompt', async () => {
    server.reply({ status: 400, headers: json, chunks: [fixtureBytes('azure-openai', 'error-content-filter.json')] });
    await expect(adapter.chat(server.call(chatRequest(), deployment))).rejects.toMatchObject({ fallbackable: false });
  });
});
