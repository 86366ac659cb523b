import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { AttemptFinished } from '../../events/request-events.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { anthropicYaml } from '../support/anthropic-yaml.js';

const citySchema = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };

/**
 * Either official SDK against an alias whose provider speaks the other wire format: how requests are
 * translated on the wire (system prompts, tool_choice, tool turns, max_tokens defaults), what cannot be
 * translated, and cached-token billing. The client-visible answers of every SDK × provider pair are in
 * the conformance matrix (conformance-matrix.test.ts).
 */
describe('cross-format: client format ≠ provider format', () => {
  let gw: TestGateway;
  let anthropic: Anthropic;
  let openai: OpenAI;

  beforeAll(async () => {
    gw = await startTestGateway({ yaml: anthropicYaml });
    anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  describe('Anthropic SDK → OpenAI-backed alias', () => {
    test('buffered text: the upstream got a Chat Completions request with the system prompt as a system message', async () => {
      await anthropic.messages.create({ model: 'gpt', max_tokens: 300, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello' }] });
      const upstream = gw.mock.requests()[0];
      expect(upstream).toMatchObject({ format: 'openai', model: 'gpt-upstream' });
      expect(upstream.body).toMatchObject({ max_tokens: 300, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello' }] });
    });

    test('a forced tool (tool_choice type tool) becomes an OpenAI function tool_choice', async () => {
      const final = await anthropic.messages
        .stream({
          model: 'gpt', max_tokens: 300, tools: [{ name: 'get_weather', input_schema: citySchema }], tool_choice: { type: 'tool', name: 'get_weather' },
          messages: [{ role: 'user', content: 'Weather in Paris?' }],
        })
        .finalMessage();
      expect(final.stop_reason).toBe('tool_use');
      expect(gw.mock.requests()[0].body).toMatchObject({ tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    });

    test('a tool_result turn becomes an OpenAI tool message', async () => {
      await anthropic.messages.create({
        model: 'gpt', max_tokens: 300, tools: [{ name: 'get_weather', input_schema: citySchema }],
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' }] },
        ],
      });
      expect((gw.mock.requests()[0].body as { messages: unknown[] }).messages).toEqual([
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18°C' },
      ]);
    });
  });

  describe('OpenAI SDK → Anthropic-backed alias', () => {
    test('buffered: the system message becomes Anthropic system, and max_tokens defaults to the deployment limit', async () => {
      await openai.chat.completions.create({ model: 'claude', messages: [{ role: 'system', content: 'Sys' }, { role: 'user', content: 'Hello' }] });
      const upstream = gw.mock.requests()[0];
      expect(upstream).toMatchObject({ format: 'anthropic', model: 'claude-upstream' });
      // No max_tokens from the client: the deployment's limit, capped at 4096.
      expect(upstream.body).toMatchObject({ max_tokens: 4096, system: 'Sys', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }] });
    });

    test('streamed tool calls with tool_choice required and include_usage: tool_choice any upstream, usage after the call', async () => {
      const stream = await openai.chat.completions.create({
        model: 'claude', stream: true, stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: citySchema } }],
        tool_choice: 'required',
      });
      let finish = '';
      let usage: OpenAI.CompletionUsage | null = null;
      for await (const chunk of stream) {
        finish = chunk.choices[0]?.finish_reason ?? finish;
        usage = chunk.usage ?? usage;
      }
      expect(finish).toBe('tool_calls');
      // The mock's tool answer has one output token per argument piece.
      expect(usage?.completion_tokens).toBeGreaterThan(0);
      expect(gw.mock.requests()[0].body).toMatchObject({ stream: true, tool_choice: { type: 'any' } });
    });

    test('a tool message in the history becomes a tool_result block in an alternating user turn', async () => {
      await openai.chat.completions.create({
        model: 'claude',
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: citySchema } }],
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'call_9', content: '18°C' },
        ],
      });
      expect((gw.mock.requests()[0].body as { messages: unknown[] }).messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_9', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_9', content: '18°C' }] },
      ]);
    });

    test('a parameter Anthropic cannot honour is a 400 naming it, and the provider is never called', async () => {
      const error = await openai.chat.completions.create({ model: 'claude', seed: 7, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('seed');
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('history with tool arguments that are not a JSON object cannot go to Anthropic: 400 naming them, no provider call', async () => {
      const error = await openai.chat.completions
        .create({
          model: 'claude',
          messages: [
            { role: 'user', content: 'x' },
            { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '[1, 2]' } }] },
            { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
          ],
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('messages[1].tool_calls[0].function.arguments');
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('cached tokens reported by Anthropic reach the OpenAI client as cached_tokens and the ledger at the cached price', async () => {
      gw.mock.addScenario({ model: 'claude-upstream', times: 1, behaviour: { cachedTokens: 3 } });
      const { data, response } = await openai.chat.completions.create({ model: 'claude-solo', messages: [{ role: 'user', content: 'Cache me if you can' }] }).withResponse();
      expect(data.usage?.prompt_tokens_details?.cached_tokens).toBe(3);
      const events = await gw.requestEvents(response.headers.get('x-request-id')!);
      const attempt = events.find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];
      expect(attempt.usage).toMatchObject({ input: data.usage!.prompt_tokens, cachedInput: 3, output: 12 });
    });
  });
});
