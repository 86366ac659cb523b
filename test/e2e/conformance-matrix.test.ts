import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { mockEmbedding } from '../../modules/providers/mock/mock-embeddings.js';
import type { MockRequestRecord } from '../../modules/providers/mock/mock-provider-server.js';
import {
  BEDROCK_CREDENTIALS,
  BEDROCK_CREDENTIALS_ENV,
  CAPITAL_SCHEMA,
  CLIENT_SDKS,
  type ClientSdk,
  PNG_BASE64,
  PROVIDER_FORMATS,
  type ProviderFormat,
  TOOL_RESULT,
  WEATHER_SCHEMA,
  configuredAliases,
  conformanceYaml,
  embeddingTokens,
  foldOpenAiStream,
  plannedArguments,
  plannedText,
  throttled,
} from '../support/conformance.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';

/**
 * Issue 4's conformance matrix: ONE gateway whose configuration has an alias per provider format
 * (openai-compatible, azure-openai, anthropic, gemini, bedrock — all on the test's mock), driven by
 * both official SDKs. Every case either client format can express runs for every provider format:
 *
 * | case                              | openai SDK                         | @anthropic-ai/sdk                        |
 * |-----------------------------------|------------------------------------|------------------------------------------|
 * | models list                       | models.list / retrieve             | — (see below)                            |
 * | buffered chat                     | chat.completions.create            | messages.create                          |
 * | streaming without usage           | stream: true                       | — Anthropic streams always carry usage   |
 * | streaming with usage              | stream_options.include_usage       | messages.stream (usage in message_delta) |
 * | buffered / streamed tool call     | tools                              | tools                                    |
 * | multi-turn with a tool result     | role: tool                         | tool_result block                        |
 * | JSON schema output                | response_format json_schema        | output_config.format                     |
 * | JSON mode with a schema           | response_format json_object+schema | —                                        |
 * | image part (deployment: vision)   | image_url data: URL                | image block, base64 source               |
 * | embeddings                        | embeddings.create (or a clean 400) | — Anthropic has no embeddings API        |
 * | typed errors 401 / 404 / 429      | Authentication/NotFound/RateLimit  | Authentication/NotFound/RateLimit        |
 *
 * Models: `GET /v1/models` answers in OpenAI's list shape only (`{object: "list", data: [{id, object:
 * "model", created, owned_by}]}`). The Anthropic SDK's `models.list()` hits the same path and gets
 * ids, but not Anthropic's ModelInfo (`type: "model"`, `display_name`, `created_at`) nor its
 * `has_more`/`first_id`/`last_id` paging: the Anthropic Models API is not served, so that case runs
 * with the OpenAI SDK only.
 *
 * Expected values come from the mock's own plan (mock-script.ts), never from the gateway: the text
 * and usage of a prompt, the arguments it fills in for a tool schema, the vectors of a text.
 */
const PROMPT = 'Say hello';
const planned = plannedText(PROMPT);
const STRANGER_KEY = 'sk-sy-00000000000000000000000000000000';

const MATRIX = PROVIDER_FORMATS.flatMap((provider) => CLIENT_SDKS.map((sdk) => [provider.type, sdk, provider] as [string, ClientSdk, ProviderFormat]));

describe('conformance matrix: provider format × client SDK', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    process.env[BEDROCK_CREDENTIALS_ENV] = BEDROCK_CREDENTIALS;
    gw = await startTestGateway({ yaml: conformanceYaml });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  /** The mock's record of every upstream call since the last reset. */
  const upstream = (): readonly MockRequestRecord[] => gw.mock.requests();

  /** Exactly one upstream call, in the provider's dialect, for its model, streamed or not, answered in full. */
  function expectOneCall(provider: ProviderFormat, stream: boolean): MockRequestRecord {
    const calls = upstream();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ format: provider.mockFormat, model: provider.model, stream, outcome: 'completed' });
    return calls[0];
  }

  describe.each(MATRIX)('%s-backed alias × %s SDK', (_type, sdk, provider) => {
    if (sdk === 'openai') openAiCases(provider);
    else anthropicCases(provider);
  });

  function openAiCases(provider: ProviderFormat): void {
    let client: OpenAI;
    beforeAll(() => {
      client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    });
    const user = (content: string): OpenAI.Chat.Completions.ChatCompletionMessageParam[] => [{ role: 'user', content }];
    const weatherTool: OpenAI.Chat.Completions.ChatCompletionTool = { type: 'function', function: { name: 'get_weather', parameters: WEATHER_SCHEMA } };

    test('models list: every alias the key may use, the provider alias among them; no deployment or upstream model', async () => {
      const ids: string[] = [];
      for await (const model of client.models.list()) ids.push(model.id);
      expect(ids.sort()).toEqual(configuredAliases().sort());
      expect(ids).not.toContain(provider.deployment);
      expect(ids).not.toContain(provider.model);
      expect(await client.models.retrieve(provider.alias)).toMatchObject({ id: provider.alias, object: 'model' });
      await expect(client.models.retrieve(provider.deployment)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      expect(upstream()).toHaveLength(0);
    });

    test('buffered chat: the planned text, stop, exact usage; one non-streamed upstream call', async () => {
      const completion = await client.chat.completions.create({ model: provider.alias, messages: user(PROMPT) });
      expect(completion).toMatchObject({ object: 'chat.completion', model: provider.alias });
      expect(completion.choices).toHaveLength(1);
      expect(completion.choices[0].message).toMatchObject({ role: 'assistant', content: planned.text });
      expect(completion.choices[0].finish_reason).toBe('stop');
      expect(completion.usage).toMatchObject({
        prompt_tokens: planned.usage.prompt,
        completion_tokens: planned.usage.completion,
        total_tokens: planned.usage.prompt + planned.usage.completion,
      });
      expectOneCall(provider, false);
    });

    test('streaming without include_usage: the planned text as deltas, stop, and no usage chunk', async () => {
      const folded = await foldOpenAiStream(await client.chat.completions.create({ model: provider.alias, stream: true, messages: user(PROMPT) }));
      expect(folded.text).toBe(planned.text);
      expect(folded.finish).toBe('stop');
      expect(folded.usageChunks).toHaveLength(0);
      expect(folded.chunks.every((c) => c.model === provider.alias)).toBe(true);
      expectOneCall(provider, true);
    });

    test('streaming with include_usage: exactly one usage chunk, last, with empty choices and the exact counts', async () => {
      const folded = await foldOpenAiStream(
        await client.chat.completions.create({ model: provider.alias, stream: true, stream_options: { include_usage: true }, messages: user(PROMPT) }),
      );
      expect(folded.text).toBe(planned.text);
      expect(folded.finish).toBe('stop');
      expect(folded.usageChunks).toHaveLength(1);
      expect(folded.chunks.at(-1)).toBe(folded.usageChunks[0]);
      expect(folded.usageChunks[0].choices).toEqual([]);
      expect(folded.usageChunks[0].usage).toMatchObject({
        prompt_tokens: planned.usage.prompt,
        completion_tokens: planned.usage.completion,
        total_tokens: planned.usage.prompt + planned.usage.completion,
      });
      expectOneCall(provider, true);
    });

    test('buffered tool call: the provider call id, the name and arguments that parse to the planned sample', async () => {
      const completion = await client.chat.completions.create({ model: provider.alias, messages: user('Weather in Paris?'), tools: [weatherTool] });
      const call = expectOneCall(provider, false);
      const choice = completion.choices[0];
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.tool_calls).toHaveLength(1);
      const toolCall = choice.message.tool_calls![0];
      if (toolCall.type !== 'function') throw new Error(`expected a function call, got ${toolCall.type}`);
      expect(toolCall.id).toBe(provider.toolCallId(call.seq));
      expect(toolCall.function.name).toBe('get_weather');
      expect(JSON.parse(toolCall.function.arguments)).toEqual(plannedArguments(WEATHER_SCHEMA));
    });

    test('streamed tool call: id and name once, argument deltas that assemble to complete JSON', async () => {
      const folded = await foldOpenAiStream(
        await client.chat.completions.create({ model: provider.alias, stream: true, messages: user('Weather in Paris?'), tools: [weatherTool] }),
      );
      const call = expectOneCall(provider, true);
      expect(folded.finish).toBe('tool_calls');
      expect(folded.text).toBe('');
      expect(folded.calls).toHaveLength(1);
      expect(folded.calls[0]).toMatchObject({ id: provider.toolCallId(call.seq), name: 'get_weather' });
      expect(JSON.parse(folded.calls[0].arguments)).toEqual(plannedArguments(WEATHER_SCHEMA));
      if (provider.toolArgumentsInPieces) expect(folded.calls[0].argumentPieces).toBeGreaterThan(1);
      else expect(folded.calls[0].argumentPieces).toBe(1);
    });

    test('multi-turn: the tool result goes back upstream and the model answers in text', async () => {
      const first = await client.chat.completions.create({ model: provider.alias, messages: user('Weather in Paris?'), tools: [weatherTool] });
      const toolCall = first.choices[0].message.tool_calls![0];
      if (toolCall.type !== 'function') throw new Error(`expected a function call, got ${toolCall.type}`);
      gw.mock.clearRequests();
      const second = await client.chat.completions.create({
        model: provider.alias,
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: null, tool_calls: [toolCall] },
          { role: 'tool', tool_call_id: toolCall.id, content: TOOL_RESULT },
        ],
      });
      // The mock answers in text only when the conversation ends with a tool result it could read.
      expect(second.choices[0].message.content).toBe(planned.text);
      expect(second.choices[0].message.tool_calls ?? []).toEqual([]);
      expect(second.choices[0].finish_reason).toBe('stop');
      const sent = JSON.stringify(expectOneCall(provider, false).body);
      expect(sent).toMatch(/temperature\\?":18/);
      if (provider.wireToolIds) expect(sent).toContain(toolCall.id);
    });

    if (provider.jsonSchema) {
      test('JSON schema output: the answer is the planned JSON, which parses against the schema', async () => {
        const completion = await client.chat.completions.create({
          model: provider.alias,
          messages: user('Capital of France as JSON'),
          response_format: { type: 'json_schema', json_schema: { name: 'capital', strict: true, schema: CAPITAL_SCHEMA } },
        });
        expect(completion.choices[0].finish_reason).toBe('stop');
        expect(JSON.parse(completion.choices[0].message.content!)).toEqual(plannedArguments(CAPITAL_SCHEMA));
        expectOneCall(provider, false);
      });
    } else {
      test('JSON schema output cannot be honoured: a 400 unsupported_parameter naming response_format, never silently dropped', async () => {
        const error = await client.chat.completions
          .create({
            model: provider.alias,
            messages: user('Capital of France as JSON'),
            response_format: { type: 'json_schema', json_schema: { name: 'capital', strict: true, schema: CAPITAL_SCHEMA } },
          })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect(error).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'response_format' });
        expect(upstream()).toHaveLength(0);
      });
    }

    // JSON mode with a schema (Together's and Fireworks' dialect; Instructor's JSON_SCHEMA mode) is the same
    // request as json_schema: the schema is never dropped in favour of plain JSON mode.
    test(`JSON mode with a schema (response_format json_object + schema): ${provider.jsonSchema ? 'the planned JSON for the schema' : 'a 400 naming response_format'}`, async () => {
      const asked = client.chat.completions.create({
        model: provider.alias,
        messages: user('Capital of France as JSON'),
        response_format: { type: 'json_object', schema: CAPITAL_SCHEMA } as unknown as OpenAI.ResponseFormatJSONObject,
      });
      if (!provider.jsonSchema) {
        const error = await asked.catch((e: unknown) => e);
        expect(error).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'response_format' });
        expect(upstream()).toHaveLength(0);
        return;
      }
      const completion = await asked;
      expect(JSON.parse(completion.choices[0].message.content!)).toEqual(plannedArguments(CAPITAL_SCHEMA));
      expectOneCall(provider, false);
    });

    test('an image part (base64 data: URL) reaches the vision deployment and is answered', async () => {
      const completion = await client.chat.completions.create({
        model: provider.alias,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: PROMPT },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
            ],
          },
        ],
      });
      expect(completion.choices[0].message.content).toBe(planned.text);
      expect(completion.usage?.completion_tokens).toBe(planned.usage.completion);
      expect(JSON.stringify(expectOneCall(provider, false).body)).toContain(PNG_BASE64);
    });

    if (provider.embeddings) {
      const route = provider.embeddings;
      test('embeddings: the mock vectors in input order, exact usage, in the provider dialect', async () => {
        const input = ['The quick brown fox', 'jumps over the lazy dog'];
        const result = await client.embeddings.create({ model: route.alias, input, encoding_format: 'float' });
        expect(result).toMatchObject({ object: 'list', model: route.alias });
        expect(result.data.map((d) => d.index)).toEqual([0, 1]);
        expect(result.data.map((d) => d.embedding)).toEqual(input.map((text) => mockEmbedding(text, route.dimensions)));
        expect(result.usage).toEqual({ prompt_tokens: embeddingTokens(input), total_tokens: embeddingTokens(input) });
        const calls = upstream();
        expect(calls).toHaveLength(route.callsFor(input.length));
        for (const call of calls) expect(call).toMatchObject({ format: route.mockFormat, model: route.model, stream: false, outcome: 'completed' });
      });
    } else {
      test('embeddings: the provider format has none, so a 400 naming the model and no upstream call', async () => {
        const error = await client.embeddings.create({ model: provider.alias, input: 'x' }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect(error).toMatchObject({ status: 400, code: 'invalid_request', param: 'model' });
        expect(upstream()).toHaveLength(0);
      });
    }

    test('401: a wrong gateway key is an AuthenticationError; nothing goes upstream', async () => {
      const stranger = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: STRANGER_KEY, maxRetries: 0 });
      const error = await stranger.chat.completions.create({ model: provider.alias, messages: user('x') }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(error).toMatchObject({ status: 401, code: 'invalid_api_key' });
      expect(upstream()).toHaveLength(0);
    });

    test('404: an unknown alias is a NotFoundError naming the model; nothing goes upstream', async () => {
      const unknown = `${provider.alias}-unknown`;
      const error = await client.chat.completions.create({ model: unknown, messages: user('x') }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error).toMatchObject({ status: 404, type: 'invalid_request_error', code: 'model_not_found', param: 'model' });
      expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain(unknown);
      expect(upstream()).toHaveLength(0);
    });

    test('429: every route rate limited with retry-after is a RateLimitError carrying that retry-after', async () => {
      await expectRateLimited(provider, 'openai', async (alias) => {
        const error = await client.chat.completions.create({ model: alias, messages: user('x') }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.RateLimitError);
        const apiError = error as InstanceType<typeof OpenAI.APIError>;
        expect(apiError).toMatchObject({ status: 429, code: 'rate_limited' });
        return apiError;
      });
    });
  }

  function anthropicCases(provider: ProviderFormat): void {
    let client: Anthropic;
    beforeAll(() => {
      client = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
    });
    const user = (content: string): Anthropic.MessageParam[] => [{ role: 'user', content }];
    const weatherTool: Anthropic.Tool = { name: 'get_weather', input_schema: WEATHER_SCHEMA };

    test('buffered chat: the planned text, end_turn, exact usage; one non-streamed upstream call', async () => {
      const message = await client.messages.create({ model: provider.alias, max_tokens: 200, messages: user(PROMPT) });
      expect(message).toMatchObject({ type: 'message', role: 'assistant', model: provider.alias, stop_reason: 'end_turn' });
      expect(message.id).toMatch(/^msg_/);
      expect(message.content).toEqual([{ type: 'text', text: planned.text }]);
      expect(message.usage).toMatchObject({ input_tokens: planned.usage.prompt, output_tokens: planned.usage.completion, cache_read_input_tokens: 0 });
      expectOneCall(provider, false);
    });

    // Streaming "without usage" has no Anthropic form: every Anthropic stream reports usage.
    test('streaming: the planned text as text deltas; usage (input and output) settled in message_delta', async () => {
      const stream = client.messages.stream({ model: provider.alias, max_tokens: 200, messages: user(PROMPT) });
      let text = '';
      const types: string[] = [];
      let deltaUsage: Anthropic.MessageDeltaUsage | null = null;
      stream.on('text', (delta) => {
        text += delta;
      });
      stream.on('streamEvent', (event) => {
        types.push(event.type);
        if (event.type === 'message_delta') deltaUsage = event.usage;
      });
      const final = await stream.finalMessage();
      expect(text).toBe(planned.text);
      expect(types[0]).toBe('message_start');
      expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
      expect(deltaUsage).toMatchObject({ input_tokens: planned.usage.prompt, output_tokens: planned.usage.completion });
      expect(final).toMatchObject({ model: provider.alias, stop_reason: 'end_turn', content: [{ type: 'text', text: planned.text }] });
      expect(final.usage).toMatchObject({ input_tokens: planned.usage.prompt, output_tokens: planned.usage.completion });
      expectOneCall(provider, true);
    });

    test('buffered tool use: the provider call id, the name and the planned input object', async () => {
      const message = await client.messages.create({ model: provider.alias, max_tokens: 200, tools: [weatherTool], messages: user('Weather in Paris?') });
      const call = expectOneCall(provider, false);
      expect(message.stop_reason).toBe('tool_use');
      expect(message.content).toEqual([{ type: 'tool_use', id: provider.toolCallId(call.seq), name: 'get_weather', input: plannedArguments(WEATHER_SCHEMA) }]);
    });

    test('streamed tool use: input_json_delta pieces assemble to the planned input', async () => {
      const stream = client.messages.stream({ model: provider.alias, max_tokens: 200, tools: [weatherTool], messages: user('Weather in Paris?') });
      const pieces: string[] = [];
      stream.on('streamEvent', (event) => {
        if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta') pieces.push(event.delta.partial_json);
      });
      const final = await stream.finalMessage();
      const call = expectOneCall(provider, true);
      expect(final.stop_reason).toBe('tool_use');
      expect(final.content).toEqual([{ type: 'tool_use', id: provider.toolCallId(call.seq), name: 'get_weather', input: plannedArguments(WEATHER_SCHEMA) }]);
      expect(JSON.parse(pieces.join(''))).toEqual(plannedArguments(WEATHER_SCHEMA));
      // Pieces pass through as they come where the provider guarantees they assemble to an object; an
      // OpenAI-shaped provider's arguments are whatever the model produced, so they are held, checked and
      // written whole (one piece).
      if (provider.toolArgumentsInPieces && provider.mockFormat !== 'openai') expect(pieces.length).toBeGreaterThan(1);
      else expect(pieces).toHaveLength(1);
    });

    test('multi-turn: a tool_result goes back upstream and the model answers in text', async () => {
      const first = await client.messages.create({ model: provider.alias, max_tokens: 200, tools: [weatherTool], messages: user('Weather in Paris?') });
      const toolUse = first.content.find((block) => block.type === 'tool_use');
      if (!toolUse || toolUse.type !== 'tool_use') throw new Error('expected a tool_use block');
      gw.mock.clearRequests();
      const second = await client.messages.create({
        model: provider.alias,
        max_tokens: 200,
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: TOOL_RESULT }] },
        ],
      });
      // The mock answers in text only when the conversation ends with a tool result it could read.
      expect(second.stop_reason).toBe('end_turn');
      expect(second.content).toEqual([{ type: 'text', text: planned.text }]);
      const sent = JSON.stringify(expectOneCall(provider, false).body);
      expect(sent).toMatch(/temperature\\?":18/);
      if (provider.wireToolIds) expect(sent).toContain(toolUse.id);
    });

    // Anthropic's structured output (`output_config.format`) is the canonical json_schema request: the same
    // routes that honour response_format honour it; elsewhere it is refused by name, never dropped.
    if (provider.jsonSchema) {
      test('JSON schema output (output_config.format): the answer is the planned JSON, which parses against the schema', async () => {
        const message = await client.messages.create({
          model: provider.alias, max_tokens: 200, messages: user('Capital of France as JSON'), output_config: { format: { type: 'json_schema', schema: CAPITAL_SCHEMA } },
        });
        expect(message.stop_reason).toBe('end_turn');
        const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
        expect(JSON.parse(text)).toEqual(plannedArguments(CAPITAL_SCHEMA));
        expectOneCall(provider, false);
      });
    } else {
      test('JSON schema output (output_config.format) cannot be honoured: a 400 naming output_config.format, never silently dropped', async () => {
        const error = await client.messages
          .create({ model: provider.alias, max_tokens: 200, messages: user('Capital of France as JSON'), output_config: { format: { type: 'json_schema', schema: CAPITAL_SCHEMA } } })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Anthropic.BadRequestError);
        const apiError = error as InstanceType<typeof Anthropic.APIError>;
        expect(apiError.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('output_config.format') } });
        expect(upstream()).toHaveLength(0);
      });
    }

    test('an image block (base64 source) reaches the vision deployment and is answered', async () => {
      const message = await client.messages.create({
        model: provider.alias,
        max_tokens: 200,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: PROMPT },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
            ],
          },
        ],
      });
      expect(message.content).toEqual([{ type: 'text', text: planned.text }]);
      expect(message.usage.output_tokens).toBe(planned.usage.completion);
      expect(JSON.stringify(expectOneCall(provider, false).body)).toContain(PNG_BASE64);
    });

    test('401: a wrong gateway key is an AuthenticationError with authentication_error; nothing goes upstream', async () => {
      const stranger = new Anthropic({ baseURL: gw.url, apiKey: STRANGER_KEY, maxRetries: 0 });
      const error = await stranger.messages.create({ model: provider.alias, max_tokens: 5, messages: user('x') }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
      expect(upstream()).toHaveLength(0);
    });

    test('404: an unknown alias is a NotFoundError with not_found_error naming it; nothing goes upstream', async () => {
      const unknown = `${provider.alias}-unknown`;
      const error = await client.messages.create({ model: unknown, max_tokens: 5, messages: user('x') }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.NotFoundError);
      expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: expect.stringContaining(unknown) } });
      expect(upstream()).toHaveLength(0);
    });

    test('429: every route rate limited with retry-after is a RateLimitError (rate_limit_error) carrying that retry-after', async () => {
      await expectRateLimited(provider, 'anthropic', async (alias) => {
        const error = await client.messages.create({ model: alias, max_tokens: 5, messages: user('x') }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Anthropic.RateLimitError);
        const apiError = error as InstanceType<typeof Anthropic.APIError>;
        expect(apiError.status).toBe(429);
        expect(apiError.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
        return apiError;
      });
    });
  }

  /**
   * The mock answers the pair's own throttled deployment with 429 + retry-after: 7 on every call; the
   * client's SDK error must carry that retry-after, name no upstream detail, and every upstream call
   * must have been to that deployment, in the provider's dialect.
   */
  async function expectRateLimited(
    provider: ProviderFormat,
    sdk: ClientSdk,
    call: (alias: string) => Promise<{ headers?: Headers | undefined; error?: unknown; message: string }>,
  ): Promise<void> {
    const target = throttled(provider, sdk);
    gw.mock.addScenario({ model: target.model, behaviour: { status: 429, retryAfterSeconds: 7 } });
    const error = await call(target.alias);
    expect(error.headers?.get('retry-after')).toBe('7');
    expect(error.message).toContain(`${target.alias}#1 (rate_limited)`);
    // Nothing of the upstream leaks: not its address, credential, Azure api-version or AWS key id.
    expect(`${error.message} ${JSON.stringify(error.error)}`).not.toMatch(/127\.0\.0\.1|upstream-secret|AKIDEXAMPLE|wJalrXUtnFEMI|api-version|\/openai\/deployments/);
    const calls = upstream();
    expect(calls.length).toBeGreaterThanOrEqual(1);
    for (const record of calls) expect(record).toMatchObject({ format: provider.mockFormat, model: target.model, outcome: 'error-status' });
  }
});
