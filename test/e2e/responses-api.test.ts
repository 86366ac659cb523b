import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import type { RequestAdmitted } from '../../events/request-events.js';
import type { MockRequestRecord } from '../../modules/providers/mock/mock-provider-server.js';
import {
  BEDROCK_CREDENTIALS,
  BEDROCK_CREDENTIALS_ENV,
  CAPITAL_SCHEMA,
  PNG_BASE64,
  PROVIDER_FORMATS,
  type ProviderFormat,
  TOOL_RESULT,
  WEATHER_SCHEMA,
  conformanceYaml,
  plannedArguments,
  plannedText,
} from '../support/conformance.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';

/**
 * `POST /v1/responses` (issue 11 item 4) driven by the official `openai` SDK's `client.responses`
 * against an alias of every provider format (all on the test's mock): buffered, streamed (the
 * semantic event sequence, checked event by event), a function-call round trip, structured output
 * and an image. Expected values come from the mock's own plan, never from the gateway. Hostile input
 * is refused in the OpenAI envelope before anything is admitted or billed.
 */
const PROMPT = 'Say hello';
const planned = plannedText(PROMPT);
const weatherTool: OpenAI.Responses.FunctionTool = { type: 'function', name: 'get_weather', parameters: WEATHER_SCHEMA, strict: false };

describe('/v1/responses with the official openai SDK', () => {
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    process.env[BEDROCK_CREDENTIALS_ENV] = BEDROCK_CREDENTIALS;
    gw = await startTestGateway({ yaml: conformanceYaml });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  function expectOneCall(provider: ProviderFormat, stream: boolean): MockRequestRecord {
    const calls = gw.mock.requests();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ format: provider.mockFormat, model: provider.model, stream, outcome: 'completed' });
    return calls[0];
  }

  describe.each(PROVIDER_FORMATS.map((p) => [p.type, p] as [string, ProviderFormat]))('%s-backed alias', (_type, provider) => {
    test('buffered: a completed response with one message item holding the planned text, and exact usage', async () => {
      const { data: response, response: raw } = await client.responses.create({ model: provider.alias, input: PROMPT, instructions: 'Be brief.' }).withResponse();
      expect(response).toMatchObject({ object: 'response', status: 'completed', model: provider.alias, store: false, instructions: 'Be brief.', error: null });
      expect(response.id).toMatch(/^resp_/);
      expect(response.output).toHaveLength(1);
      expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
      expect(response.output_text).toBe(planned.text);
      const call = expectOneCall(provider, false);
      // The instructions reach the provider as its system prompt, so the mock counts them as prompt text.
      const usage = plannedText(`Be brief.\n${PROMPT}`).usage;
      expect(response.usage).toMatchObject({
        input_tokens: usage.prompt,
        output_tokens: usage.completion,
        total_tokens: usage.prompt + usage.completion,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      });
      expect(JSON.stringify(call.body)).toContain('Be brief.');
      const admitted = (await gw.requestEvents(raw.headers.get('x-request-id')!)).find((e) => e.type === 'RequestAdmitted')!.data as RequestAdmitted['data'];
      expect(admitted).toMatchObject({ clientFormat: 'responses', alias: provider.alias, stream: false });
    });

    test('streaming: the full semantic event sequence, numbered in order, deltas that add up to the planned text, usage at the end', async () => {
      const stream = await client.responses.create({ model: provider.alias, input: PROMPT, stream: true });
      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      expectOneCall(provider, true);
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      const types = events.map((e) => e.type);
      const deltas = events.filter((e): e is OpenAI.Responses.ResponseTextDeltaEvent => e.type === 'response.output_text.delta');
      expect(deltas.length).toBeGreaterThanOrEqual(1);
      expect(types).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        ...deltas.map(() => 'response.output_text.delta'),
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(deltas.map((d) => d.delta).join('')).toBe(planned.text);
      const itemId = (events[2] as OpenAI.Responses.ResponseOutputItemAddedEvent).item.id;
      expect(deltas.every((d) => d.item_id === itemId && d.output_index === 0 && d.content_index === 0)).toBe(true);
      expect(events[0]).toMatchObject({ response: { status: 'in_progress', output: [], usage: null } });
      const done = events.find((e): e is OpenAI.Responses.ResponseTextDoneEvent => e.type === 'response.output_text.done')!;
      expect(done.text).toBe(planned.text);
      const completed = events[events.length - 1] as OpenAI.Responses.ResponseCompletedEvent;
      expect(completed.response).toMatchObject({ status: 'completed', output: [{ type: 'message', id: itemId, status: 'completed', content: [{ type: 'output_text', text: planned.text }] }] });
      expect(completed.response.usage).toMatchObject({ input_tokens: planned.usage.prompt, output_tokens: planned.usage.completion, total_tokens: planned.usage.prompt + planned.usage.completion });
    });

    test('streaming through the SDK helper (responses.stream): the final response it assembles matches', async () => {
      const final = await client.responses.stream({ model: provider.alias, input: PROMPT }).finalResponse();
      expect(final.status).toBe('completed');
      expect(final.output_text).toBe(planned.text);
    });

    test('function call round trip: a function_call item, then its output as an input item is answered in text', async () => {
      const first = await client.responses.create({ model: provider.alias, input: 'Weather in Paris?', tools: [weatherTool] });
      const call = expectOneCall(provider, false);
      expect(first.status).toBe('completed');
      const calls = first.output.filter((item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === 'function_call');
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ type: 'function_call', call_id: provider.toolCallId(call.seq), name: 'get_weather', status: 'completed' });
      expect(JSON.parse(calls[0].arguments)).toEqual(plannedArguments(WEATHER_SCHEMA));
      expect(first.tools).toEqual([expect.objectContaining({ type: 'function', name: 'get_weather' })]);

      gw.mock.clearRequests();
      const second = await client.responses.create({
        model: provider.alias,
        tools: [weatherTool],
        input: [
          { role: 'user', content: 'Weather in Paris?' },
          ...first.output.filter((item) => item.type === 'function_call'),
          { type: 'function_call_output', call_id: calls[0].call_id, output: TOOL_RESULT },
        ],
      });
      // The mock answers in text only when the conversation ends with a tool result it could read.
      expect(second.output_text).toBe(planned.text);
      expect(second.output.some((item) => item.type === 'function_call')).toBe(false);
      const sent = JSON.stringify(expectOneCall(provider, false).body);
      expect(sent).toMatch(/temperature\\?":18/);
      if (provider.wireToolIds) expect(sent).toContain(calls[0].call_id);
    });

    test('streamed function call: output_item.added with the call, argument deltas, arguments.done, output_item.done', async () => {
      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const event of await client.responses.create({ model: provider.alias, input: 'Weather in Paris?', tools: [weatherTool], stream: true })) events.push(event);
      const call = expectOneCall(provider, true);
      const deltas = events.filter((e): e is OpenAI.Responses.ResponseFunctionCallArgumentsDeltaEvent => e.type === 'response.function_call_arguments.delta');
      expect(events.map((e) => e.type)).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        ...deltas.map(() => 'response.function_call_arguments.delta'),
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.completed',
      ]);
      if (provider.toolArgumentsInPieces) expect(deltas.length).toBeGreaterThan(1);
      else expect(deltas).toHaveLength(1);
      const added = events[2] as OpenAI.Responses.ResponseOutputItemAddedEvent;
      expect(added.item).toMatchObject({ type: 'function_call', call_id: provider.toolCallId(call.seq), name: 'get_weather', arguments: '' });
      const argumentsDone = events.find((e): e is OpenAI.Responses.ResponseFunctionCallArgumentsDoneEvent => e.type === 'response.function_call_arguments.done')!;
      expect(argumentsDone.arguments).toBe(deltas.map((d) => d.delta).join(''));
      expect(JSON.parse(argumentsDone.arguments)).toEqual(plannedArguments(WEATHER_SCHEMA));
      const completed = events[events.length - 1] as OpenAI.Responses.ResponseCompletedEvent;
      expect(completed.response.output).toEqual([expect.objectContaining({ type: 'function_call', arguments: argumentsDone.arguments, status: 'completed' })]);
    });

    if (provider.jsonSchema) {
      test('structured output (text.format json_schema): the answer is the planned JSON, and the format is echoed', async () => {
        const response = await client.responses.create({
          model: provider.alias,
          input: 'Capital of France as JSON',
          text: { format: { type: 'json_schema', name: 'capital', strict: true, schema: CAPITAL_SCHEMA } },
        });
        expect(JSON.parse(response.output_text)).toEqual(plannedArguments(CAPITAL_SCHEMA));
        expect(response.text?.format).toMatchObject({ type: 'json_schema', name: 'capital', strict: true });
        expectOneCall(provider, false);
      });

      test('structured output through the SDK helper (responses.parse with a zod format): output_parsed is the planned object', async () => {
        const Capital = z.object({ city: z.string(), population: z.number().int() });
        const parsed = await client.responses.parse({ model: provider.alias, input: 'Capital of France as JSON', text: { format: zodTextFormat(Capital, 'capital') } });
        expect(parsed.output_parsed).toEqual(plannedArguments(CAPITAL_SCHEMA));
      });
    } else {
      test('structured output cannot be honoured on this route: 400 unsupported_parameter naming text.format, nothing sent upstream', async () => {
        const error = await client.responses
          .create({ model: provider.alias, input: 'Capital of France as JSON', text: { format: { type: 'json_schema', name: 'capital', schema: CAPITAL_SCHEMA } } })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect(error).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'text.format' });
        expect(gw.mock.requests()).toHaveLength(0);
      });
    }

    test('an input_image part (data: URL) with input_text reaches the vision deployment and is answered', async () => {
      const response = await client.responses.create({
        model: provider.alias,
        input: [{ role: 'user', content: [{ type: 'input_text', text: PROMPT }, { type: 'input_image', image_url: `data:image/png;base64,${PNG_BASE64}`, detail: 'auto' }] }],
      });
      expect(response.output_text).toBe(planned.text);
      expect(JSON.stringify(expectOneCall(provider, false).body)).toContain(PNG_BASE64);
    });
  });

  describe('hostile and unsupported input: 400 in the OpenAI envelope, nothing admitted, billed or sent upstream', () => {
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['an unknown input item type', { input: [{ type: 'computer_call_output', call_id: 'c1', output: {} }] }, 'input[0].type', 'unsupported_parameter'],
      ['an item reference (stored state)', { input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0].type', 'unsupported_parameter'],
      ['a reasoning item', { input: [{ type: 'reasoning', id: 'rs_1', summary: [] }, { role: 'user', content: 'hi' }] }, 'input[0].type', 'unsupported_parameter'],
      ['a function_call item without call_id', { input: [{ type: 'function_call', name: 'get_weather', arguments: '{}' }] }, 'input[0].call_id', 'invalid_request'],
      ['a function_call_output without output', { input: [{ role: 'user', content: 'hi' }, { type: 'function_call_output', call_id: 'c1' }] }, 'input[1].output', 'invalid_request'],
      ['an item that is not an object', { input: ['hello'] }, 'input[0]', 'invalid_request'],
      ['an unknown role', { input: [{ role: 'tool', content: 'hi' }] }, 'input[0].role', 'invalid_request'],
      ['an unknown content part', { input: [{ role: 'user', content: [{ type: 'input_audio', data: 'AAAA' }] }] }, 'input[0].content[0].type', 'unsupported_parameter'],
      ['an image in an assistant turn', { input: [{ role: 'assistant', content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] }] }, 'input[0].content[0]', 'invalid_request'],
      ['an uploaded file id', { input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }] }, 'input[0].content[0].file_id', 'unsupported_parameter'],
      ['an empty input', { input: [] }, 'input', 'invalid_request'],
      ['only instructions', { instructions: 'Be brief.', input: [{ role: 'system', content: 'x' }] }, 'input', 'invalid_request'],
      ['a hosted tool', { input: 'hi', tools: [{ type: 'web_search' }] }, 'tools[0].type', 'unsupported_parameter'],
      ['tool_choice naming a missing tool', { input: 'hi', tools: [weatherTool], tool_choice: { type: 'function', name: 'nope' } }, 'tool_choice', 'invalid_request'],
      ['store: true (stateless gateway)', { input: 'hi', store: true }, 'store', 'unsupported_parameter'],
      ['previous_response_id', { input: 'hi', previous_response_id: 'resp_123' }, 'previous_response_id', 'unsupported_parameter'],
      ['a reasoning effort (not yet routable)', { input: 'hi', reasoning: { effort: 'high' } }, 'reasoning.effort', 'unsupported_parameter'],
      ['truncation: auto', { input: 'hi', truncation: 'auto' }, 'truncation', 'unsupported_parameter'],
      ['obfuscated stream events', { input: 'hi', stream: true, stream_options: { include_obfuscation: true } }, 'stream_options.include_obfuscation', 'unsupported_parameter'],
      ['an unknown text.format type', { input: 'hi', text: { format: { type: 'yaml' } } }, 'text.format.type', 'invalid_request'],
      ['a json_schema format without a schema', { input: 'hi', text: { format: { type: 'json_schema', name: 'x' } } }, 'text.format.schema', 'invalid_request'],
      ['max_output_tokens of 0', { input: 'hi', max_output_tokens: 0 }, 'max_output_tokens', 'invalid_request'],
      ['an unknown top-level parameter', { input: 'hi', frobnicate: true }, 'frobnicate', 'unsupported_parameter'],
      ['a prototype key', { input: 'hi', constructor: { prototype: {} } }, 'constructor.prototype', 'unsupported_parameter'],
    ];

    test.each(cases)('%s', async (_name, body, param, code) => {
      const before = await gw.countEvents(['RequestAdmitted', 'AttemptFinished']);
      const { status, json, headers } = await postJson(gw, '/v1/responses', { model: PROVIDER_FORMATS[0].alias, ...body });
      expect(status).toBe(400);
      expect(json).toEqual({ error: expect.objectContaining({ type: 'invalid_request_error', code, param, message: expect.any(String) }) });
      expect(headers.get('x-request-id')).toBeTruthy();
      expect(await gw.countEvents(['RequestAdmitted', 'AttemptFinished'])).toBe(before);
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('the SDK surfaces them as BadRequestError with code and param', async () => {
      const error = await client.responses.create({ model: PROVIDER_FORMATS[0].alias, input: 'hi', store: true }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'store' });
    });

    test('stored-response routes (retrieve, delete, cancel, input items): 404 saying nothing is stored, in the OpenAI envelope', async () => {
      await expect(client.responses.retrieve('resp_123')).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
      await expect(client.responses.delete('resp_123')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(client.responses.cancel('resp_123')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(client.responses.inputItems.list('resp_123')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      const anonymous = await fetch(`${gw.url}/v1/responses/resp_123`);
      expect(anonymous.status).toBe(401);
      const error = await client.responses.retrieve('resp_123').catch((e: unknown) => e);
      expect((error as Error).message).toMatch(/store is always false/);
    });

    test('malformed JSON, a missing key and an unknown model are answered in the OpenAI envelope too', async () => {
      const malformed = await postJson(gw, '/v1/responses', '{"model":');
      expect(malformed.status).toBe(400);
      expect(malformed.json).toEqual({ error: expect.objectContaining({ code: 'invalid_json', type: 'invalid_request_error' }) });
      const anonymous = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toEqual({ error: expect.objectContaining({ type: 'authentication_error' }) });
      const unknown = await client.responses.create({ model: 'no-such-alias', input: 'hi' }).catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
      expect(gw.mock.requests()).toHaveLength(0);
    });
  });

  test('a cap cut short: max_output_tokens → status incomplete with reason max_output_tokens, buffered and streamed', async () => {
    const provider = PROVIDER_FORMATS[0];
    const buffered = await client.responses.create({ model: provider.alias, input: PROMPT, max_output_tokens: 2 });
    expect(buffered).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, max_output_tokens: 2 });
    expect(buffered.output_text).toBe(plannedText(PROMPT, { maxTokens: 2 }).text);
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ model: provider.alias, input: PROMPT, max_output_tokens: 2, stream: true })) events.push(event);
    expect(events[events.length - 1]).toMatchObject({ type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } });
  });

  test('a provider failure after the stream started: an error event, then response.failed; the partial usage is still recorded', async () => {
    const provider = PROVIDER_FORMATS[0];
    gw.mock.addScenario({ model: provider.model, behaviour: { errorAfterChunks: 2 }, times: 1 });
    const { data: stream, response: raw } = await client.responses.create({ model: provider.alias, input: PROMPT, stream: true }).withResponse();
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-2)).toEqual(['error', 'response.failed']);
    expect(types).not.toContain('response.completed');
    expect(events[events.length - 2]).toMatchObject({ type: 'error', code: 'upstream_error' });
    expect(events[events.length - 1]).toMatchObject({ type: 'response.failed', response: { status: 'failed', error: { code: 'upstream_error' } } });
    const recorded = await gw.requestEvents(raw.headers.get('x-request-id')!);
    expect(recorded.find((e) => e.type === 'AttemptFinished')!.data).toMatchObject({ outcome: 'failed_partial' });
  });
});

/**
 * `/v1/responses` runs on the chat pipeline itself: a provider failure before any output falls back to
 * the alias's next route, and both attempts are recorded (the failed one unbilled), as for any client format.
 */
describe('/v1/responses on the shared pipeline: fallback and settlement', () => {
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gw = await startTestGateway();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
  });

  test.each([false, true])('stream=%s: the primary answers 503, the backup answers; two attempts recorded, one billed', async (stream) => {
    gw.mock.clearRequests();
    gw.mock.addScenario({ model: 'model-primary', times: 1, behaviour: { status: 503 } });
    let requestId: string;
    let text: string;
    if (stream) {
      const { data, response } = await client.responses.create({ model: 'chat', input: PROMPT, stream: true }).withResponse();
      requestId = response.headers.get('x-request-id')!;
      text = '';
      for await (const event of data) if (event.type === 'response.output_text.delta') text += event.delta;
    } else {
      const { data, response } = await client.responses.create({ model: 'chat', input: PROMPT }).withResponse();
      requestId = response.headers.get('x-request-id')!;
      text = data.output_text;
    }
    expect(text).toBe(planned.text);
    expect(gw.mock.requests().map((r) => [r.model, r.outcome])).toEqual([['model-primary', 'error-status'], ['model-backup', 'completed']]);
    const events = await gw.requestEvents(requestId);
    expect(events.map((e) => e.type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'AttemptFinished', 'RequestCompleted']);
    expect(events[1].data).toMatchObject({ deploymentId: 'primary', outcome: 'failed', usage: { input: 0, output: 0 } });
    expect(events[2].data).toMatchObject({ deploymentId: 'backup', outcome: 'success', usage: { input: planned.usage.prompt, output: planned.usage.completion } });
    expect(events[3].data).toMatchObject({ status: 'success', fallbackDepth: 1 });
  });
});
