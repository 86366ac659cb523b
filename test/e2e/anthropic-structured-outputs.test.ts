import OpenAI from 'openai';
import { zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import type { AttemptFinished } from '../../events/request-events.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { acmeKeyYaml, mockProviderYaml } from '../support/anthropic-yaml.js';

/**
 * `response_format: json_schema` (Chat Completions) and `text.format: json_schema` (Responses) on an
 * Anthropic-backed alias: a deployment declaring the structured_outputs capability gets Anthropic's structured
 * outputs (`output_config.format`), and the answer's text — the JSON — reaches the client as the message
 * content, which the SDK's parse helpers read. A route without the capability is skipped; with none left the
 * client gets a 400 naming response_format, and nothing is sent upstream.
 */
function structuredYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
${mockProviderYaml('mock-anthropic', 'anthropic', mockUrl)}deployments:
  - id: claude-old
    provider: mock-anthropic
    model: claude-old-upstream
    capabilities: [chat, streaming, json_schema]   # an older Claude: declared, but without structured outputs
    contextWindow: 200000
    maxOutputTokens: 8192
    price: { inputPer1M: "0.80", outputPer1M: "4.00" }
  - id: claude-current
    provider: mock-anthropic
    model: claude-current-upstream
    capabilities: [chat, streaming, json_schema, structured_outputs]
    contextWindow: 200000
    maxOutputTokens: 8192
    price: { inputPer1M: "3.00", outputPer1M: "15.00" }
aliases:
  - name: claude
    routes:
      - { deployment: claude-old, priority: 0 }
      - { deployment: claude-current, priority: 1 }
  - name: claude-old
    routes:
      - { deployment: claude-old, priority: 0 }
  - name: claude-current
    routes:
      - { deployment: claude-current, priority: 0 }
${acmeKeyYaml(keyEnv)}`;
}

const Person = z.object({ name: z.string(), age: z.number() });
const personFormat = zodResponseFormat(Person, 'person');
const personSchema = personFormat.json_schema.schema as Record<string, unknown>;
const ask: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Who wrote Dune?' }];

describe('structured outputs on Anthropic routes', () => {
  let gw: TestGateway;
  let openai: OpenAI;

  beforeAll(async () => {
    gw = await startTestGateway({ yaml: structuredYaml });
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  describe('unhappy paths', () => {
    test('no route of the alias has structured outputs: 400 naming response_format, the provider never called', async () => {
      const error = await openai.chat.completions.create({ model: 'claude-old', messages: ask, response_format: personFormat }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('response_format');
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('json_object has no Anthropic equivalent, even on a structured_outputs deployment: 400, nothing sent', async () => {
      const error = await openai.chat.completions
        .create({ model: 'claude-current', messages: ask, response_format: { type: 'json_object' } })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('response_format');
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('Responses API: the same refusal, nothing sent', async () => {
      const error = await openai.responses.create({ model: 'claude-old', input: 'Who wrote Dune?', text: { format: zodTextFormat(Person, 'person') } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(gw.mock.requests()).toHaveLength(0);
    });
  });

  describe('OpenAI SDK, Chat Completions', () => {
    test('buffered: chat.completions.parse gets a parsed object; the route without structured_outputs is skipped and the current one gets output_config.format', async () => {
      const { data: completion, response } = await openai.chat.completions.parse({ model: 'claude', messages: ask, response_format: personFormat }).withResponse();
      const message = completion.choices[0].message;
      expect(Person.parse(JSON.parse(message.content!))).toEqual(message.parsed);
      expect(message.parsed).toEqual(expect.objectContaining({ name: expect.any(String), age: expect.any(Number) }));
      const upstream = gw.mock.requests();
      expect(upstream).toHaveLength(1);
      expect(upstream[0]).toMatchObject({ format: 'anthropic', model: 'claude-current-upstream' });
      expect((upstream[0].body as { output_config: unknown }).output_config).toEqual({ format: { type: 'json_schema', schema: personSchema } });
      expect(upstream[0].body).not.toHaveProperty('response_format');
      const events = await gw.requestEvents(response.headers.get('x-request-id')!);
      const attempt = events.find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];
      expect(attempt.deploymentId).toBe('claude-current');
      expect(attempt.routing.reason).toContain('claude-old (unsupported_parameter: response_format)');
    });

    test('streamed: the JSON arrives as content deltas and the stream helper parses it', async () => {
      const stream = openai.chat.completions.stream({ model: 'claude', messages: ask, response_format: personFormat });
      let deltas = 0;
      stream.on('content.delta', () => deltas++);
      const final = await stream.finalChatCompletion();
      expect(deltas).toBeGreaterThan(0);
      const message = final.choices[0].message;
      expect(Person.parse(JSON.parse(message.content!))).toEqual(message.parsed);
      const upstream = gw.mock.requests();
      expect(upstream).toHaveLength(1);
      expect(upstream[0]).toMatchObject({ format: 'anthropic', model: 'claude-current-upstream' });
      expect(upstream[0].body).toMatchObject({ stream: true, output_config: { format: { type: 'json_schema', schema: personSchema } } });
    });

    test('without response_format the first route serves and no output_config is sent', async () => {
      await openai.chat.completions.create({ model: 'claude', messages: ask });
      const upstream = gw.mock.requests();
      expect(upstream[0].model).toBe('claude-old-upstream');
      expect(upstream[0].body).not.toHaveProperty('output_config');
    });
  });

  describe('OpenAI SDK, Responses API', () => {
    test('responses.parse: text.format json_schema becomes output_config.format, output_parsed is the object', async () => {
      const response = await openai.responses.parse({ model: 'claude', input: 'Who wrote Dune?', text: { format: zodTextFormat(Person, 'person') } });
      expect(Person.parse(response.output_parsed)).toEqual(JSON.parse(response.output_text));
      const upstream = gw.mock.requests();
      expect(upstream[0]).toMatchObject({ format: 'anthropic', model: 'claude-current-upstream' });
      expect((upstream[0].body as { output_config: unknown }).output_config).toEqual({ format: { type: 'json_schema', schema: personSchema } });
    });
  });
});
