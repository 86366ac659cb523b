import Anthropic from '@anthropic-ai/sdk';
import { getEncoding } from 'js-tiktoken';
import OpenAI from 'openai';
import { mockTokens } from '../../modules/providers/mock/mock-script.js';
import {
  BEDROCK_CREDENTIALS,
  BEDROCK_CREDENTIALS_ENV,
  PROVIDER_FORMATS,
  type ProviderFormat,
  WEATHER_SCHEMA,
  conformanceYaml,
} from '../support/conformance.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';

/**
 * `POST /v1/messages/count_tokens` (issue 11 item 5) with `@anthropic-ai/sdk`'s `messages.countTokens`:
 * Anthropic and Bedrock routes are counted by the provider (the mock answers with the prompt count its
 * messages would report), every other route by the gateway's cl100k tokenizer, and the response says
 * which in `x-switchyard-token-count`. Expected numbers come from the mock's own rule and from
 * js-tiktoken directly, never from the gateway.
 */
const PROMPT = 'How many tokens is this prompt, exactly?';
const SYSTEM = 'You count carefully.';
const cl100k = getEncoding('cl100k_base');
const byType = (type: ProviderFormat['type']): ProviderFormat => PROVIDER_FORMATS.find((p) => p.type === type)!;

describe('/v1/messages/count_tokens with @anthropic-ai/sdk', () => {
  let gw: TestGateway;
  let client: Anthropic;

  beforeAll(async () => {
    process.env[BEDROCK_CREDENTIALS_ENV] = BEDROCK_CREDENTIALS;
    gw = await startTestGateway({ yaml: conformanceYaml });
    client = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  test.each([
    ['anthropic', 'anthropic-count-tokens', /\/v1\/messages\/count_tokens$/],
    ['bedrock', 'bedrock-count-tokens', /\/model\/[^/]+\/count-tokens$/],
  ] as const)('%s route: the provider counts (system + messages, translated as for a message); labelled provider', async (type, mockFormat, path) => {
    const provider = byType(type);
    const { data, response } = await client.messages
      .countTokens({ model: provider.alias, system: SYSTEM, messages: [{ role: 'user', content: PROMPT }] })
      .withResponse();
    // The mock's rule: four characters a token over the prompt text, plus three.
    expect(data).toEqual({ input_tokens: mockTokens(`${SYSTEM}\n${PROMPT}`) + 3 });
    expect(response.headers.get('x-switchyard-token-count')).toBe('provider');
    expect(response.headers.get('x-request-id')).toBeTruthy();
    const calls = gw.mock.requests();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ format: mockFormat, model: provider.model, outcome: 'completed' });
    expect(calls[0].path).toMatch(path);
    expect(JSON.stringify(calls[0].body)).toContain(PROMPT);
  });

  test('anthropic route with tools: the tool definitions go to the provider count too', async () => {
    const provider = byType('anthropic');
    const withTools = await client.messages.countTokens({
      model: provider.alias,
      messages: [{ role: 'user', content: PROMPT }],
      tools: [{ name: 'get_weather', input_schema: WEATHER_SCHEMA }],
    });
    expect(withTools.input_tokens).toBe(mockTokens(PROMPT) + 3);
    expect(gw.mock.requests()[0].body).toMatchObject({ tools: [{ name: 'get_weather', input_schema: WEATHER_SCHEMA }] });
  });

  test.each(['openai-compatible', 'gemini'] as const)('%s route: no provider count endpoint, so the tokenizer answers; labelled estimate', async (type) => {
    const provider = byType(type);
    const { data, response } = await client.messages.countTokens({ model: provider.alias, messages: [{ role: 'user', content: PROMPT }] }).withResponse();
    // cl100k tokens of the text, plus the chat template: 3 per message and 3 for the reply primer.
    expect(data).toEqual({ input_tokens: cl100k.encode(PROMPT).length + 6 });
    expect(response.headers.get('x-switchyard-token-count')).toBe('estimate');
    expect(gw.mock.requests()).toHaveLength(0);
  });

  test('a provider that cannot count right now (503): the estimate answers, labelled so', async () => {
    const provider = byType('anthropic');
    gw.mock.addScenario({ model: provider.model, behaviour: { status: 503 }, times: 1 });
    const { data, response } = await client.messages.countTokens({ model: provider.alias, messages: [{ role: 'user', content: PROMPT }] }).withResponse();
    expect(data).toEqual({ input_tokens: cl100k.encode(PROMPT).length + 6 });
    expect(response.headers.get('x-switchyard-token-count')).toBe('estimate');
    expect(gw.mock.requests()[0]).toMatchObject({ format: 'anthropic-count-tokens', outcome: 'error-status' });
  });

  test('a provider refusing the request itself (400): the caller gets it in the Anthropic envelope', async () => {
    const provider = byType('anthropic');
    gw.mock.addScenario({ model: provider.model, behaviour: { status: 400 }, times: 1 });
    const error = await client.messages.countTokens({ model: provider.alias, messages: [{ role: 'user', content: PROMPT }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  test('access and validation as for messages: unknown alias 404, bad key 401, bad body 400 — nothing counted upstream, no request events', async () => {
    const before = await gw.countEvents(['RequestAdmitted', 'AttemptFinished']);
    await expect(client.messages.countTokens({ model: 'no-such-alias', messages: [{ role: 'user', content: PROMPT }] })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const stranger = new Anthropic({ baseURL: gw.url, apiKey: 'sk-sy-00000000000000000000000000000000', maxRetries: 0 });
    await expect(stranger.messages.countTokens({ model: byType('anthropic').alias, messages: [{ role: 'user', content: PROMPT }] })).rejects.toBeInstanceOf(
      Anthropic.AuthenticationError,
    );
    const invalid: Array<[Record<string, unknown>, RegExp]> = [
      [{ model: byType('anthropic').alias, messages: [] }, /messages/],
      [{ model: byType('anthropic').alias, messages: [{ role: 'user', content: PROMPT }], max_tokens: 10 }, /max_tokens/],
      [{ model: byType('anthropic').alias, messages: [{ role: 'user', content: PROMPT }], temperature: 0.5 }, /temperature/],
      [{ model: byType('anthropic').alias, messages: [{ role: 'robot', content: PROMPT }] }, /messages\.0\.role/],
    ];
    for (const [body, message] of invalid) {
      const { status, json } = await postJson(gw, '/v1/messages/count_tokens', body);
      expect(status).toBe(400);
      expect(json).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(message) } });
    }
    // A count is not a generation: it is never admitted or billed, success or not.
    await client.messages.countTokens({ model: byType('anthropic').alias, messages: [{ role: 'user', content: PROMPT }] });
    expect(await gw.countEvents(['RequestAdmitted', 'AttemptFinished'])).toBe(before);
    expect(gw.mock.requests()).toHaveLength(1);
  });

  describe('OpenAI POST /v1/responses/input_tokens (client.responses.inputTokens.count): the same counting for Responses bodies', () => {
    let openai: OpenAI;
    beforeAll(() => {
      openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    });

    test('anthropic route: the provider counts the instructions and input', async () => {
      const { data, response } = await openai.responses.inputTokens.count({ model: byType('anthropic').alias, instructions: SYSTEM, input: PROMPT }).withResponse();
      expect(data).toEqual({ object: 'response.input_tokens', input_tokens: mockTokens(`${SYSTEM}\n${PROMPT}`) + 3 });
      expect(response.headers.get('x-switchyard-token-count')).toBe('provider');
      expect(gw.mock.requests()[0]).toMatchObject({ format: 'anthropic-count-tokens', outcome: 'completed' });
    });

    test('openai-compatible route: the tokenizer answers (two messages: instructions and input), labelled estimate', async () => {
      const { data, response } = await openai.responses.inputTokens.count({ model: byType('openai-compatible').alias, instructions: SYSTEM, input: PROMPT }).withResponse();
      expect(data).toEqual({ object: 'response.input_tokens', input_tokens: cl100k.encode(SYSTEM).length + cl100k.encode(PROMPT).length + 3 + 3 + 3 });
      expect(response.headers.get('x-switchyard-token-count')).toBe('estimate');
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('validated as a response request: errors in the OpenAI envelope naming the parameter', async () => {
      const error = await openai.responses.inputTokens.count({ model: byType('anthropic').alias, input: [{ type: 'item_reference', id: 'msg_1' }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'input[0].type' });
      expect(gw.mock.requests()).toHaveLength(0);
    });
  });
});
