import Anthropic from '@anthropic-ai/sdk';
import { Decimal } from 'decimal.js';
import type { AttemptFinished, RequestCompleted } from '../../events/request-events.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { anthropicYaml } from '../support/anthropic-yaml.js';

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};
const WORDS = 'Switchyard routes this mock answer through one gateway with exact usage and';

/**
 * The official `@anthropic-ai/sdk` against Anthropic-backed aliases: the Messages wire format both ways,
 * cached-token billing, fallback and mid-stream failures. Text, streaming, tool use, multi-turn, images
 * and the 401/404/429 SDK errors are in the conformance matrix (conformance-matrix.test.ts).
 */
describe('Anthropic SDK against Switchyard (Anthropic-backed alias)', () => {
  let gw: TestGateway;
  let client: Anthropic;

  beforeAll(async () => {
    gw = await startTestGateway({ yaml: anthropicYaml });
    client = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  test('messages.create: a msg_ id of the gateway; the upstream got an Anthropic request with its own key and version', async () => {
    const message = await client.messages.create({ model: 'claude', max_tokens: 200, system: 'Be brief.', messages: [{ role: 'user', content: 'Say hello' }] });
    expect(message.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(message.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });

    const upstream = gw.mock.requests();
    expect(upstream).toHaveLength(1);
    expect(upstream[0]).toMatchObject({ format: 'anthropic', path: '/v1/messages', model: 'claude-upstream', stream: false });
    expect(upstream[0].headers['x-api-key']).toBe('upst***56'); // the provider credential, never the client's key
    expect(upstream[0].headers.authorization).toBeUndefined();
    expect(upstream[0].headers['anthropic-version']).toBe('2023-06-01');
    expect(upstream[0].body).toMatchObject({ model: 'claude-upstream', max_tokens: 200, system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello' }] }] });
  });

  test('create({stream: true}): the raw event sequence is what Anthropic sends, one text block with a delta per piece', async () => {
    const stream = await client.messages.create({ model: 'claude', max_tokens: 200, stream: true, messages: [{ role: 'user', content: 'Raw events' }] });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types.filter((t) => t === 'content_block_start')).toHaveLength(1);
    expect(types.filter((t) => t === 'content_block_stop')).toHaveLength(1);
    expect(types.filter((t) => t === 'content_block_delta')).toHaveLength(12);
  });

  test('tool use with tool_choice any: tools and tool_choice reach Anthropic as sent', async () => {
    const message = await client.messages.create({
      model: 'claude', max_tokens: 200, tools: [weatherTool], tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    expect(message.stop_reason).toBe('tool_use');
    expect(gw.mock.requests()[0].body).toMatchObject({ tools: [{ name: 'get_weather', input_schema: weatherTool.input_schema }], tool_choice: { type: 'any' } });
  });

  test('multi-turn with a tool_result followed by text in the same turn: the upstream gets exactly these alternating turns', async () => {
    const first = await client.messages.create({ model: 'claude', max_tokens: 200, tools: [weatherTool], messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    const toolUse = first.content.find((b) => b.type === 'tool_use');
    if (!toolUse || toolUse.type !== 'tool_use') throw new Error('expected a tool_use block');
    const second = await client.messages.create({
      model: 'claude', max_tokens: 200, tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '18°C and sunny' }, { type: 'text', text: 'Summarise.' }] },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    const sent = gw.mock.requests()[1].body as { messages: Array<{ role: string; content: unknown }> };
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: toolUse.id, name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '18°C and sunny' }, { type: 'text', text: 'Summarise.' }] },
    ]);
  });

  test('cached prompt tokens: usage reports cache reads apart, and the ledger bills them at the cached price', async () => {
    gw.mock.addScenario({ model: 'claude-upstream', times: 1, behaviour: { cachedTokens: 4 } });
    const response = await client.messages.create({ model: 'claude-solo', max_tokens: 200, messages: [{ role: 'user', content: 'A prompt that is long enough to cache' }] }).withResponse();
    const usage = response.data.usage;
    expect(usage.cache_read_input_tokens).toBe(4);
    const requestId = response.response.headers.get('x-request-id')!;
    const events = await gw.requestEvents(requestId);
    const attempt = events.find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];
    // Canonical input counts the cached tokens too: what the client saw as input_tokens + cache reads.
    expect(attempt.usage).toEqual({ input: usage.input_tokens + 4, cachedInput: 4, cacheWrite: 0, output: 12, reasoning: 0 });
    const expected = new Decimal(usage.input_tokens).times('3.00').plus(new Decimal(4).times('0.30')).plus(new Decimal(12).times('15.00')).div(1_000_000);
    expect(attempt.cost.total).toBe(expected.toFixed(12));
    expect(events.find((e) => e.type === 'RequestAdmitted')!.data).toMatchObject({ clientFormat: 'anthropic', alias: 'claude-solo' });
  });

  test('an overloaded (529) primary falls back to the backup before any output', async () => {
    gw.mock.addScenario({ model: 'claude-upstream', behaviour: { status: 529 } });
    const final = await client.messages.stream({ model: 'claude', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: WORDS }]);
    expect(gw.mock.requests().map((r) => r.model)).toEqual(['claude-upstream', 'claude-backup-upstream']);
  });

  test('an error event inside the upstream stream after output ends the client stream with an error, not a clean stop', async () => {
    gw.mock.addScenario({ model: 'claude-upstream', times: 1, behaviour: { errorAfterChunks: 3 } });
    const stream = await client.messages.create({ model: 'claude', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'x' }] }).withResponse();
    const requestId = stream.response.headers.get('x-request-id')!;
    const seen: string[] = [];
    let failure: unknown = null;
    try {
      for await (const event of stream.data) seen.push(event.type);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    expect(seen).not.toContain('message_stop');
    expect(seen.filter((t) => t === 'content_block_delta')).toHaveLength(3);
    expect(gw.mock.requests()).toHaveLength(1); // no fallback after output
    const events = await gw.requestEvents(requestId);
    expect((events.find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'])).toMatchObject({ outcome: 'failed_partial', errorClass: 'overloaded' });
    expect((events.at(-1)!.data as RequestCompleted['data']).status).toBe('failed');
  });

  describe('typed SDK errors', () => {
    test('400: a missing max_tokens is a BadRequestError naming the field', async () => {
      const error = await client.messages.create({ model: 'claude', messages: [{ role: 'user', content: 'x' }] } as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect((error as InstanceType<typeof Anthropic.APIError>).message).toContain('max_tokens');
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('429 from both routes of a fallback chain: each route tried once, then 429 rate_limit_error with retry-after (RateLimitError)', async () => {
      // A rate-limited route falls back to the next; when every route is rate limited the caller gets a
      // 429 carrying the provider's retry-after, which the SDK knows how to retry.
      gw.mock.addScenario({ behaviour: { status: 429, retryAfterSeconds: 7 } });
      const error = await client.messages.create({ model: 'claude', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.RateLimitError);
      const apiError = error as InstanceType<typeof Anthropic.APIError>;
      expect(apiError.status).toBe(429);
      expect(apiError.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
      expect(apiError.headers?.get('retry-after')).toBe('7');
      expect(gw.mock.requests().map((r) => r.model)).toEqual(['claude-upstream', 'claude-backup-upstream']);
      expect(JSON.stringify(apiError.error)).not.toContain(gw.mockUrl);
    });
  });
});
