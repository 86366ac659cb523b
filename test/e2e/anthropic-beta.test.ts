import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { AttemptFinished } from '../../events/request-events.js';
import { FIDELITY_CREDENTIALS_ENV, fidelityYaml } from '../support/fidelity-yaml.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';

const WORDS = 'Switchyard routes this mock answer through one gateway with exact usage and';
const FILES = 'files-api-2025-04-14';
const TOOLS = 'token-efficient-tools-2025-02-19';

describe('anthropic-beta: the caller\'s betas reach Anthropic routes, other routes are ineligible', () => {
  let gw: TestGateway;
  let anthropic: Anthropic;
  let openai: OpenAI;

  async function attemptOf(requestId: string): Promise<AttemptFinished['data']> {
    const events = await gw.requestEvents(requestId);
    return events.find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];
  }

  beforeAll(async () => {
    process.env[FIDELITY_CREDENTIALS_ENV] = 'AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
    gw = await startTestGateway({ yaml: fidelityYaml });
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

  describe('refused before any provider is called', () => {
    test.each([
      ['a second header smuggled in a name', `${FILES}; x-api-key: stolen`],
      ['a tab inside a name', `files\tapi`],
      ['a name with a colon', 'x-api-key:stolen'],
      ['an empty name', `${FILES},,${TOOLS}`],
      ['17 names', Array.from({ length: 17 }, (_, i) => `beta-${i}`).join(',')],
    ])('%s in the header: an Anthropic 400 naming the header', async (_, value) => {
      // Line breaks cannot leave a client (Node refuses them in header values): the unit suite covers those.
      const headers = { 'x-api-key': gw.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'anthropic-beta': value };
      const response = await fetch(`${gw.url}/v1/messages`, {
        method: 'POST', headers, body: JSON.stringify({ model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { type: string; error: { type: string; message: string } };
      expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(body.error.message).toContain("'anthropic-beta'");
      expect(body.error.message).not.toContain('stolen');
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('OpenAI SDK: a beta to an alias with no Anthropic route is a 400 naming the header and the beta; nothing is sent', async () => {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0, defaultHeaders: { 'anthropic-beta': FILES } });
      for (const model of ['gpt', 'gemini']) {
        const error = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        const apiError = error as InstanceType<typeof OpenAI.BadRequestError>;
        expect(apiError.error).toMatchObject({ code: 'unsupported_parameter', param: 'anthropic-beta' });
        expect(apiError.message).toContain(`Unsupported parameter 'anthropic-beta' (${FILES}): no route of '${model}' can honour it.`);
      }
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('Anthropic SDK: betas to an OpenAI-backed alias are an Anthropic-format 400 naming the beta, streamed too', async () => {
      const error = await anthropic.beta.messages.create({ model: 'gpt', max_tokens: 50, betas: [FILES], messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect((error as Error).message).toContain(`'anthropic-beta' (${FILES})`);
      const streamed = await anthropic.beta.messages.create({ model: 'gpt', max_tokens: 50, betas: [FILES], stream: true, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
      expect(streamed).toBeInstanceOf(Anthropic.BadRequestError);
      expect(gw.mock.requests()).toHaveLength(0);
    });
  });

  describe('passed to the routes that can honour them', () => {
    test('Anthropic SDK betas to an Anthropic route: the header arrives upstream, comma-separated in order; buffered and streamed', async () => {
      const message = await anthropic.beta.messages.create({ model: 'claude', max_tokens: 50, betas: [FILES, TOOLS], messages: [{ role: 'user', content: 'Hi' }] });
      expect(message.content).toEqual([{ type: 'text', text: WORDS }]);
      const stream = anthropic.beta.messages.stream({ model: 'claude', max_tokens: 50, betas: [TOOLS], messages: [{ role: 'user', content: 'Hi' }] });
      expect((await stream.finalMessage()).content).toEqual([{ type: 'text', text: WORDS }]);
      const upstream = gw.mock.requests();
      expect(upstream.map((r) => [r.format, r.stream, r.headers['anthropic-beta']])).toEqual([['anthropic', false, `${FILES},${TOOLS}`], ['anthropic', true, TOOLS]]);
      expect(JSON.stringify(upstream[0].body)).not.toContain(FILES);
    });

    test('a raw anthropic-beta header on the plain Messages API reaches the Anthropic route; without one no header is sent', async () => {
      await anthropic.messages.create({ model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }, { headers: { 'anthropic-beta': ` ${FILES} , ${TOOLS}` } });
      await anthropic.messages.create({ model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
      expect(gw.mock.requests().map((r) => r.headers['anthropic-beta'])).toEqual([`${FILES},${TOOLS}`, undefined]);
    });

    test('Claude on Bedrock: the betas become additionalModelRequestFields.anthropic_beta, buffered and streamed', async () => {
      await anthropic.beta.messages.create({ model: 'bedrock', max_tokens: 50, betas: [TOOLS], messages: [{ role: 'user', content: 'Hi' }] });
      const stream = anthropic.beta.messages.stream({ model: 'bedrock', max_tokens: 50, betas: [TOOLS, FILES], messages: [{ role: 'user', content: 'Hi' }] });
      expect((await stream.finalMessage()).content).toEqual([{ type: 'text', text: WORDS }]);
      const upstream = gw.mock.requests();
      expect(upstream.map((r) => [r.format, r.stream])).toEqual([['bedrock', false], ['bedrock', true]]);
      expect((upstream[0].body as { additionalModelRequestFields: unknown }).additionalModelRequestFields).toEqual({ anthropic_beta: [TOOLS] });
      expect((upstream[1].body as { additionalModelRequestFields: unknown }).additionalModelRequestFields).toEqual({ anthropic_beta: [TOOLS, FILES] });
      expect(upstream[1].headers['anthropic-beta']).toBeUndefined();
    });

    test('OpenAI SDK with the header in defaultHeaders: an Anthropic-backed alias gets it, buffered and streamed', async () => {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0, defaultHeaders: { 'anthropic-beta': TOOLS } });
      const completion = await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'Hi' }] });
      expect(completion.choices[0].message.content).toBe(WORDS);
      const stream = await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'Hi' }], stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(text).toBe(WORDS);
      expect(gw.mock.requests().map((r) => [r.format, r.stream, r.headers['anthropic-beta']])).toEqual([['anthropic', false, TOOLS], ['anthropic', true, TOOLS]]);
    });

    test('OpenAI SDK Responses API with the header: the Anthropic route gets it; an OpenAI-backed alias is a 400 naming it', async () => {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0, defaultHeaders: { 'anthropic-beta': TOOLS } });
      const response = await client.responses.create({ model: 'claude', input: 'Hi' });
      expect(response.output_text).toBe(WORDS);
      const error = await client.responses.create({ model: 'gpt', input: 'Hi' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'unsupported_parameter', param: 'anthropic-beta' });
      expect(gw.mock.requests().map((r) => [r.format, r.headers['anthropic-beta']])).toEqual([['anthropic', TOOLS]]);
    });

    test('token counting: beta.messages.countTokens with betas reaches Anthropic\'s count endpoint with the header; a bad header is a 400', async () => {
      const counted = await anthropic.beta.messages.countTokens({ model: 'claude', betas: [TOOLS], messages: [{ role: 'user', content: 'Hi' }] });
      expect(counted.input_tokens).toBeGreaterThan(0);
      const upstream = gw.mock.requests();
      // The SDK's beta countTokens adds its own token-counting beta after the caller's: all are passed on.
      expect(upstream.map((r) => [r.format, r.headers['anthropic-beta']])).toEqual([['anthropic-count-tokens', `${TOOLS},token-counting-2024-11-01`]]);
      const refused = await anthropic.messages
        .countTokens({ model: 'claude', messages: [{ role: 'user', content: 'Hi' }] }, { headers: { 'anthropic-beta': 'x-api-key:stolen' } })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
      expect((refused as Error).message).toContain("'anthropic-beta'");
      expect(gw.mock.requests()).toHaveLength(1);
    });

    test('idempotency: the same Idempotency-Key and body with different betas is a reused key (422), not a replay', async () => {
      const options = { headers: { 'idempotency-key': `beta-${Date.now()}` } };
      const params = { model: 'claude', max_tokens: 50, messages: [{ role: 'user' as const, content: 'Hi' }] };
      await anthropic.messages.create(params, options);
      const replay = await anthropic.messages.create(params, options).withResponse();
      expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
      const reused = await anthropic.messages.create(params, { headers: { ...options.headers, 'anthropic-beta': TOOLS } }).catch((e: unknown) => e);
      expect(reused).toBeInstanceOf(Anthropic.APIError);
      expect((reused as InstanceType<typeof Anthropic.APIError>).status).toBe(422);
      expect(gw.mock.requests()).toHaveLength(1);
    });

    test('routing: a beta makes the OpenAI route of a mixed alias ineligible (recorded on the attempt) and the Anthropic route serves', async () => {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0, defaultHeaders: { 'anthropic-beta': FILES } });
      const { data, response } = await client.chat.completions.create({ model: 'mixed', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      expect(data.choices[0].message.content).toBe(WORDS);
      expect(gw.mock.requests().map((r) => [r.format, r.headers['anthropic-beta']])).toEqual([['anthropic', FILES]]);
      const attempt = await attemptOf(response.headers.get('x-request-id')!);
      expect(attempt.deploymentId).toBe('d-claude');
      expect(attempt.routing.reason).toContain('d-gpt (unsupported_parameter: anthropic-beta)');
      // Without the header the same alias is served by its first (OpenAI) route.
      await openai.chat.completions.create({ model: 'mixed', messages: [{ role: 'user', content: 'Hi' }] });
      expect(gw.mock.requests()[1].format).toBe('openai');
    });
  });
});
