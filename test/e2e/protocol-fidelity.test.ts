import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { AttemptFinished } from '../../events/request-events.js';
import { mockThoughtSignature } from '../../modules/providers/mock/gemini-mock-format.js';
import { mockSignature, MOCK_REASONING } from '../../modules/providers/mock/mock-script.js';
import { FIDELITY_CREDENTIALS_ENV, fidelityYaml } from '../support/fidelity-yaml.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';

const THINKING = MOCK_REASONING.join('');
const WORDS = 'Switchyard routes this mock answer through one gateway with exact usage and';

const weatherOpenAi = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const weatherAnthropic = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

describe('protocol fidelity: parameters, reasoning, prompt caching and stream usage with the official SDKs', () => {
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  async function attemptOf(requestId: string): Promise<AttemptFinished['data']> {
    const events = await gw.requestEvents(requestId);
    return events.find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];
  }

  beforeAll(async () => {
    process.env[FIDELITY_CREDENTIALS_ENV] = 'AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
    gw = await startTestGateway({ yaml: fidelityYaml });
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  describe('OpenAI SDK', () => {
    test('penalties, logit_bias, seed, logprobs, safety_identifier and prompt_cache_key pass through to an OpenAI route; logprobs come back', async () => {
      const completion = await openai.chat.completions.create({
        model: 'gpt', messages: [{ role: 'user', content: 'Hello' }],
        frequency_penalty: 0.4, presence_penalty: -0.2, logit_bias: { '50256': -100 }, seed: 11, logprobs: true, top_logprobs: 2,
        safety_identifier: 'user-hash-1', prompt_cache_key: 'acme-greeting-v1', store: true, verbosity: 'low', service_tier: 'flex',
      });
      expect(gw.mock.requests()[0].body).toMatchObject({
        frequency_penalty: 0.4, presence_penalty: -0.2, logit_bias: { '50256': -100 }, seed: 11, logprobs: true, top_logprobs: 2,
        safety_identifier: 'user-hash-1', prompt_cache_key: 'acme-greeting-v1', store: true, verbosity: 'low', service_tier: 'flex',
      });
      const logprobs = completion.choices[0].logprobs!.content!;
      expect(logprobs.map((l) => l.token).join('')).toBe(completion.choices[0].message.content);
      expect(logprobs[0]).toMatchObject({ logprob: -0.1, top_logprobs: [{ token: logprobs[0].token, logprob: -0.1 }, { token: `${logprobs[0].token}~1`, logprob: -1.1 }] });
    });

    test('a parameter no route of the alias can honour is a 400 naming it, and no provider is called', async () => {
      const error = await openai.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'x' }], frequency_penalty: 0.5 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_parameter', param: 'frequency_penalty' });
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('routing: top_k makes the OpenAI route ineligible (recorded on the attempt) and the Anthropic route serves', async () => {
      const { data, response } = await openai.chat.completions
        .create({ model: 'mixed', messages: [{ role: 'user', content: 'Hello' }], top_k: 40 } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse();
      expect(data.choices[0].message.content).toBe(WORDS);
      const upstream = gw.mock.requests();
      expect(upstream).toHaveLength(1);
      expect(upstream[0]).toMatchObject({ format: 'anthropic', body: { top_k: 40 } });
      const attempt = await attemptOf(response.headers.get('x-request-id')!);
      expect(attempt.deploymentId).toBe('d-claude');
      expect(attempt.routing.reason).toContain('d-gpt (unsupported_parameter: top_k)');
    });

    test('reasoning_effort to an OpenAI route: passed as is, reasoning_content returned, reasoning tokens in usage and on the attempt', async () => {
      const { data, response } = await openai.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'Think' }], reasoning_effort: 'high' }).withResponse();
      expect(gw.mock.requests()[0].body).toMatchObject({ reasoning_effort: 'high' });
      expect((data.choices[0].message as unknown as { reasoning_content: string }).reasoning_content).toBe(THINKING);
      expect(data.usage).toMatchObject({ completion_tokens: 12 + 3, completion_tokens_details: { reasoning_tokens: 3 } });
      const attempt = await attemptOf(response.headers.get('x-request-id')!);
      expect(attempt.usage).toMatchObject({ output: 15, reasoning: 3 });
    });

    test('reasoning_effort to an Anthropic route: a thinking budget upstream; signed thinking_blocks make a tool round trip verify', async () => {
      const first = await openai.chat.completions.create({ model: 'claude', max_tokens: 8000, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherOpenAi], reasoning_effort: 'low' });
      expect(gw.mock.requests()[0].body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 8000 });
      const message = first.choices[0].message as OpenAI.ChatCompletionMessage & { reasoning_content: string; thinking_blocks: unknown[] };
      expect(message.reasoning_content).toBe(THINKING);
      expect(message.thinking_blocks).toEqual([{ type: 'thinking', thinking: THINKING, signature: mockSignature(THINKING) }]);
      const call = message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;

      const second = await openai.chat.completions.create({
        model: 'claude', max_tokens: 8000, tools: [weatherOpenAi], reasoning_effort: 'low',
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: null, tool_calls: [call], thinking_blocks: message.thinking_blocks } as OpenAI.ChatCompletionAssistantMessageParam,
          { role: 'tool', tool_call_id: call.id, content: '18°C' },
        ],
      });
      expect(second.choices[0].finish_reason).toBe('stop');
      expect((gw.mock.requests()[1].body as { messages: Array<{ content: unknown[] }> }).messages[1].content[0]).toEqual({ type: 'thinking', thinking: THINKING, signature: mockSignature(THINKING) });

      // Without the signed thinking (clients that keep only text and tool calls: the OpenAI Agents SDK, LlamaIndex),
      // Claude would refuse the continuation, so it goes without thinking, and says so: nothing is invented.
      const { data: bare, response } = await openai.chat.completions
        .create({
          model: 'claude', max_tokens: 8000, tools: [weatherOpenAi], reasoning_effort: 'low',
          messages: [{ role: 'user', content: 'Weather in Paris?' }, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: '18°C' }],
        })
        .withResponse();
      expect(bare.choices[0].finish_reason).toBe('stop');
      const continued = gw.mock.requests()[2].body as Record<string, unknown>;
      expect(continued).not.toHaveProperty('thinking');
      expect(continued.max_tokens).toBe(8000);
      expect(response.headers.get('x-switchyard-unsent-parameters')).toBe('reasoning_effort');
      const attempt = (await gw.requestEvents(response.headers.get('x-request-id')!)).find((e) => e.type === 'AttemptFinished')!.data as { unsentParameters?: string[] };
      expect(attempt.unsentParameters).toEqual(['reasoning_effort']);
    });

    test('streamed thinking from an Anthropic route: the signed block arrives whole as a thinking_blocks delta and round-trips', async () => {
      const stream = await openai.chat.completions.create({ model: 'claude', max_tokens: 8000, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherOpenAi], reasoning_effort: 'low', stream: true });
      const blocks: unknown[] = [];
      let call: { id: string; name: string; arguments: string } | null = null;
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & { thinking_blocks?: unknown[] }) | undefined;
        if (delta?.thinking_blocks) blocks.push(...delta.thinking_blocks);
        for (const piece of delta?.tool_calls ?? []) {
          if (piece.id) call = { id: piece.id, name: piece.function!.name!, arguments: '' };
          call!.arguments += piece.function?.arguments ?? '';
        }
      }
      expect(blocks).toEqual([{ type: 'thinking', thinking: THINKING, signature: mockSignature(THINKING) }]);
      const second = await openai.chat.completions.create({
        model: 'claude', max_tokens: 8000, tools: [weatherOpenAi], reasoning_effort: 'low',
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: null, tool_calls: [{ id: call!.id, type: 'function', function: { name: call!.name, arguments: call!.arguments } }], thinking_blocks: blocks } as OpenAI.ChatCompletionAssistantMessageParam,
          { role: 'tool', tool_call_id: call!.id, content: '18°C' },
        ],
      });
      expect(second.choices[0].message.content).toBe(WORDS);
    });

    test('streamed reasoning from a Gemini route arrives as reasoning_content deltas before the answer; thinkingConfig upstream', async () => {
      const stream = await openai.chat.completions.create({ model: 'gemini', messages: [{ role: 'user', content: 'Think' }], reasoning_effort: 'medium', stream: true, stream_options: { include_usage: true } });
      let reasoning = '';
      let text = '';
      let reasoningAfterText = false;
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string }) | undefined;
        if (delta?.reasoning_content) {
          reasoning += delta.reasoning_content;
          if (text) reasoningAfterText = true;
        }
        if (delta?.content) text += delta.content;
        if (chunk.usage) usage = chunk.usage;
      }
      expect(reasoning).toBe(THINKING);
      expect(reasoningAfterText).toBe(false);
      expect(text).toBe(WORDS);
      expect(usage?.completion_tokens_details?.reasoning_tokens).toBe(3);
      expect(gw.mock.requests()[0].body).toMatchObject({ generationConfig: { thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } } });
    });

    test('thinking + a tool round trip on a Gemini route: the thoughtSignature rides in the tool-call id and goes back upstream', async () => {
      const ask = { model: 'gemini', tools: [weatherOpenAi], reasoning_effort: 'low' as const };
      const first = await openai.chat.completions.create({ ...ask, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
      const call = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
      const signature = mockThoughtSignature('get_weather', JSON.parse(call.function.arguments));
      expect(call.id).toBe(`call_0__thought__${signature}`);

      // The client sends the assistant message back as it got it, and answers the call by its id.
      const second = await openai.chat.completions.create({
        ...ask,
        messages: [{ role: 'user', content: 'Weather in Paris?' }, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '18°C' }],
      });
      expect(second.choices[0].message.content).toBe(WORDS);
      const contents = (gw.mock.requests()[1].body as { contents: Array<{ role: string; parts: unknown[] }> }).contents;
      expect(contents[1]).toEqual({ role: 'model', parts: [{ functionCall: { name: 'get_weather', args: JSON.parse(call.function.arguments) }, thoughtSignature: signature }] });
      expect(JSON.stringify(contents)).not.toContain('__thought__');

      // A client (or gateway) that loses the signature gets Gemini 3's refusal: nothing is invented.
      const bare = await openai.chat.completions
        .create({
          ...ask,
          messages: [
            { role: 'user', content: 'Weather in Paris?' },
            { role: 'assistant', content: null, tool_calls: [{ ...call, id: 'call_0' }] },
            { role: 'tool', tool_call_id: 'call_0', content: '18°C' },
          ],
        })
        .catch((e: unknown) => e);
      expect(bare).toBeInstanceOf(OpenAI.BadRequestError);
      expect(gw.mock.requests()).toHaveLength(3);
    });

    test('streamed thinking + tool call from a Gemini route: the signed id arrives in the stream and the continuation verifies', async () => {
      const ask = { model: 'gemini', tools: [weatherOpenAi], reasoning_effort: 'low' as const };
      const stream = await openai.chat.completions.create({ ...ask, messages: [{ role: 'user', content: 'Weather in Paris?' }], stream: true });
      let call: { id: string; name: string; arguments: string } | null = null;
      for await (const chunk of stream) {
        for (const piece of chunk.choices[0]?.delta?.tool_calls ?? []) {
          if (piece.id) call = { id: piece.id, name: piece.function!.name!, arguments: '' };
          call!.arguments += piece.function?.arguments ?? '';
        }
      }
      expect(call!.id).toBe(`call_0__thought__${mockThoughtSignature('get_weather', JSON.parse(call!.arguments))}`);
      const second = await openai.chat.completions.create({
        ...ask,
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: null, tool_calls: [{ id: call!.id, type: 'function', function: { name: call!.name, arguments: call!.arguments } }] },
          { role: 'tool', tool_call_id: call!.id, content: '18°C' },
        ],
      });
      expect(second.choices[0].message.content).toBe(WORDS);
    });

    test('Responses API on a Gemini route: the signed call_id of a function_call round-trips as a function_call_output', async () => {
      const tools = [{ type: 'function' as const, name: 'get_weather', description: 'Weather for a city', parameters: weatherOpenAi.function.parameters, strict: false }];
      const first = await openai.responses.create({ model: 'gemini', input: 'Weather in Paris?', tools, reasoning: { effort: 'low' } });
      const item = first.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
      expect(item.call_id).toBe(`call_0__thought__${mockThoughtSignature('get_weather', JSON.parse(item.arguments))}`);
      const second = await openai.responses.create({
        model: 'gemini', tools, reasoning: { effort: 'low' },
        input: [
          { role: 'user', content: 'Weather in Paris?' },
          { type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments },
          { type: 'function_call_output', call_id: item.call_id, output: '18°C' },
        ],
      });
      expect(second.output_text).toBe(WORDS);
    });

    test('structured output: json_schema to OpenAI and Gemini routes answers with JSON matching the schema', async () => {
      const schema = { type: 'object', properties: { city: { type: 'string' }, temperature: { type: 'number' } }, required: ['city', 'temperature'], additionalProperties: false };
      for (const model of ['gpt', 'gemini']) {
        const completion = await openai.chat.completions.create({
          model, messages: [{ role: 'user', content: 'Weather as JSON' }], response_format: { type: 'json_schema', json_schema: { name: 'weather', schema, strict: true } },
        });
        expect(JSON.parse(completion.choices[0].message.content!)).toEqual({ city: 'Paris', temperature: 42 });
      }
    });
  });

  describe('Anthropic SDK', () => {
    test('top_k and cache_control on system and tools reach an Anthropic route; cache writes are reported and billed at the cache-write price', async () => {
      const { data, response } = await anthropic.messages
        .create({
          model: 'claude', max_tokens: 200, top_k: 5,
          system: [{ type: 'text', text: 'You are a weather assistant with long instructions.', cache_control: { type: 'ephemeral' } }],
          tools: [{ ...weatherAnthropic, cache_control: { type: 'ephemeral', ttl: '1h' } }],
          tool_choice: { type: 'none' },
          messages: [{ role: 'user', content: 'Hello' }],
        } as Anthropic.MessageCreateParamsNonStreaming)
        .withResponse();
      const body = gw.mock.requests()[0].body as Record<string, unknown>;
      expect(body).toMatchObject({
        top_k: 5,
        system: [{ type: 'text', text: 'You are a weather assistant with long instructions.', cache_control: { type: 'ephemeral' } }],
        tools: [{ name: 'get_weather', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      });
      expect(data.usage.cache_creation_input_tokens).toBeGreaterThan(0);
      const attempt = await attemptOf(response.headers.get('x-request-id')!);
      expect(attempt.usage.cacheWrite).toBe(data.usage.cache_creation_input_tokens);
      expect(attempt.cost.cacheWrite).not.toBe('0');
    });

    test('cache_control to a Bedrock route becomes cachePoint blocks; cache writes come back in usage', async () => {
      const message = await anthropic.messages.create({
        model: 'bedrock', max_tokens: 200,
        system: [{ type: 'text', text: 'Long instructions.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello', cache_control: { type: 'ephemeral' } }] }],
      });
      const body = gw.mock.requests()[0].body as { system: unknown[]; messages: Array<{ content: unknown[] }> };
      expect(body.system).toEqual([{ text: 'Long instructions.' }, { cachePoint: { type: 'default' } }]);
      expect(body.messages[0].content).toEqual([{ text: 'Hello' }, { cachePoint: { type: 'default' } }]);
      expect(message.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    });

    for (const model of ['claude', 'bedrock']) {
      test(`thinking with a tool round trip (${model}): streamed thinking with its signature, sent back, verified upstream`, async () => {
        const request = {
          model, max_tokens: 4000, thinking: { type: 'enabled' as const, budget_tokens: 2000 }, tools: [weatherAnthropic],
          messages: [{ role: 'user' as const, content: 'Weather in Paris?' }],
        };
        const first = await anthropic.messages.stream(request).finalMessage();
        expect(first.content[0]).toEqual({ type: 'thinking', thinking: THINKING, signature: mockSignature(THINKING) });
        const toolUse = first.content.find((b) => b.type === 'tool_use')!;
        if (toolUse.type !== 'tool_use') throw new Error('expected tool_use');
        const second = await anthropic.messages.create({
          ...request,
          messages: [...request.messages, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '18°C' }] }],
        });
        expect(second.stop_reason).toBe('end_turn');
        expect(second.content.map((b) => b.type)).toEqual(['thinking', 'text']);
      });
    }

    test('stream usage: message_start carries the provider\'s input count from an Anthropic route and the admission estimate otherwise', async () => {
      const starts: Record<string, number> = {};
      const finals: Record<string, number> = {};
      for (const model of ['claude', 'gpt']) {
        const stream = await anthropic.messages.create({ model, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Count my input tokens please' }] });
        for await (const event of stream) {
          if (event.type === 'message_start') starts[model] = event.message.usage.input_tokens;
          if (event.type === 'message_delta') finals[model] = event.usage.input_tokens ?? -1;
        }
      }
      // The mock counts 4 characters a token plus 3: 'Count my input tokens please' → 7 + 3.
      expect(starts.claude).toBe(10);
      expect(finals.claude).toBe(10);
      expect(starts.gpt).toBeGreaterThan(0); // the gateway's estimate; message_delta then has the provider's count
      expect(finals.gpt).toBe(10);
    });

    test('thinking on an OpenAI route: the budget becomes reasoning_effort; thinking comes back as a thinking block', async () => {
      const message = await anthropic.messages.create({ model: 'gpt', max_tokens: 20000, thinking: { type: 'enabled', budget_tokens: 16000 }, messages: [{ role: 'user', content: 'Think' }] });
      expect(gw.mock.requests()[0].body).toMatchObject({ reasoning_effort: 'high' });
      expect(message.content[0]).toMatchObject({ type: 'thinking', thinking: THINKING });
    });

    test('/v1/models answers in the Models API shape for Anthropic clients, paged, and OpenAI\'s list otherwise', async () => {
      const page = await anthropic.models.list({ limit: 2 });
      expect(page.data).toEqual([
        { type: 'model', id: 'gpt', display_name: 'gpt', created_at: '1970-01-01T00:00:00Z' },
        { type: 'model', id: 'claude', display_name: 'claude', created_at: '1970-01-01T00:00:00Z' },
      ]);
      const all: string[] = [];
      for await (const model of anthropic.models.list({ limit: 2 })) all.push(model.id);
      expect(all).toEqual(['gpt', 'claude', 'gemini', 'bedrock', 'mixed']);
      expect(await anthropic.models.retrieve('gemini')).toMatchObject({ type: 'model', id: 'gemini' });
      const missing = await anthropic.models.retrieve('nope').catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
      const openAiList = await openai.models.list();
      expect(openAiList.data[0]).toMatchObject({ id: 'gpt', object: 'model' });
    });

    test('eager_input_streaming on tools passes to Anthropic and is satisfied by every other format\'s tool streaming', async () => {
      for (const model of ['claude', 'gemini', 'bedrock', 'gpt']) {
        const stream = anthropic.messages.stream({ model, max_tokens: 100, tools: [{ ...weatherAnthropic, eager_input_streaming: true } as Anthropic.Tool], messages: [{ role: 'user', content: 'x' }] });
        expect((await stream.finalMessage()).stop_reason).toBe('tool_use');
      }
      expect(gw.mock.requests()[0].body).toMatchObject({ tools: [{ name: 'get_weather', eager_input_streaming: true }] });
    });

    test('a parameter the only route cannot honour is a 400 in Anthropic\'s envelope naming it as the client spelled it', async () => {
      const topK = await anthropic.messages.create({ model: 'gpt', max_tokens: 100, top_k: 3, messages: [{ role: 'user', content: 'x' }] } as Anthropic.MessageCreateParamsNonStreaming).catch((e: unknown) => e);
      expect(topK).toBeInstanceOf(Anthropic.BadRequestError);
      expect((topK as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining("'top_k'") } });
      // Anthropic's own tier has no OpenAI meaning: the OpenAI route cannot honour it.
      const tier = await anthropic.messages.create({ model: 'gpt', max_tokens: 100, service_tier: 'standard_only', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect(tier).toBeInstanceOf(Anthropic.BadRequestError);
      expect((tier as Error).message).toContain("'service_tier'");
      expect(gw.mock.requests()).toHaveLength(0);
    });
  });
});
