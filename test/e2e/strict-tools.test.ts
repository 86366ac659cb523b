import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { AttemptFinished } from '../../events/request-events.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { acmeKeyYaml, mockProviderYaml } from '../support/anthropic-yaml.js';

/**
 * `strict: true` on function tools (the OpenAI Agents SDK sets it on every tool) promises arguments that
 * match the schema. Anthropic routes honour it as `tools[].strict` when the deployment declares the
 * strict_tools capability; Anthropic routes without it are ineligible, and only when no route is left does
 * the client get a 400 naming the field. OpenAI-format providers receive it unchanged. (Gemini takes it as a
 * hint: gemini-sdk.test.ts sends strict tools there.)
 */
function strictYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
${mockProviderYaml('mock-anthropic', 'anthropic', mockUrl)}${mockProviderYaml('mock-openai', 'openai-compatible', `${mockUrl}/v1`)}deployments:
  - id: claude-old
    provider: mock-anthropic
    model: claude-old-upstream
    capabilities: [chat, streaming, tools]
    contextWindow: 200000
    maxOutputTokens: 8192
    price: { inputPer1M: "0.80", outputPer1M: "4.00" }
  - id: claude-current
    provider: mock-anthropic
    model: claude-current-upstream
    capabilities: [chat, streaming, tools, strict_tools]
    contextWindow: 200000
    maxOutputTokens: 8192
    price: { inputPer1M: "3.00", outputPer1M: "15.00" }
  - id: gpt-primary
    provider: mock-openai
    model: gpt-upstream
    capabilities: [chat, streaming, tools]
    contextWindow: 128000
    maxOutputTokens: 16384
    price: { inputPer1M: "2.50", outputPer1M: "10.00" }
aliases:
  - name: claude
    routes:
      - { deployment: claude-old, priority: 0 }
      - { deployment: claude-current, priority: 1 }
  - name: claude-old
    routes:
      - { deployment: claude-old, priority: 0 }
  - name: gpt
    routes:
      - { deployment: gpt-primary, priority: 0 }
${acmeKeyYaml(keyEnv)}`;
}

/** The Agents SDK's shape for a function tool: strict, every property required, no additional properties. */
const agentsParameters = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
const agentsTool: OpenAI.ChatCompletionTool = { type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: agentsParameters, strict: true } };

describe('strict function tools', () => {
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    gw = await startTestGateway({ yaml: strictYaml });
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

  describe('unhappy paths', () => {
    test('OpenAI SDK: no route of the alias can honour strict → 400 naming tools[].function.strict, the provider never called', async () => {
      const error = await openai.chat.completions
        .create({ model: 'claude-old', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [agentsTool] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('tools[].function.strict');
      expect((error as InstanceType<typeof OpenAI.APIError>).message).toMatch(/tools\[\]\.function\.strict/);
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('Anthropic SDK: the same refusal in its own names (tools[].strict), nothing sent upstream', async () => {
      const error = await anthropic.messages
        .create({
          model: 'claude-old', max_tokens: 100, messages: [{ role: 'user', content: 'x' }],
          tools: [{ name: 'get_weather', input_schema: agentsParameters, strict: true } as Anthropic.Tool],
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect(JSON.stringify((error as InstanceType<typeof Anthropic.APIError>).error)).toMatch(/tools\[\]\.strict/);
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('Anthropic SDK: strict that is not a boolean is a 400 naming it', async () => {
      const error = await anthropic.messages
        .create({ model: 'claude', max_tokens: 100, messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'f', input_schema: agentsParameters, strict: 'yes' } as unknown as Anthropic.Tool] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect(JSON.stringify((error as InstanceType<typeof Anthropic.APIError>).error)).toMatch(/tools\.0\.strict/);
      expect(gw.mock.requests()).toHaveLength(0);
    });
  });

  describe('OpenAI SDK → Anthropic-backed alias', () => {
    test('buffered: the route without strict_tools is skipped (recorded on the attempt); the current model gets tools[].strict with the schema unchanged', async () => {
      const { data: completion, response } = await openai.chat.completions.create({
        model: 'claude', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [agentsTool], tool_choice: 'required',
      }).withResponse();
      expect(completion.choices[0].finish_reason).toBe('tool_calls');
      expect(completion.choices[0].message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
      const upstream = gw.mock.requests();
      expect(upstream).toHaveLength(1);
      expect(upstream[0]).toMatchObject({ format: 'anthropic', model: 'claude-current-upstream' });
      expect((upstream[0].body as { tools: unknown[] }).tools).toEqual([
        { name: 'get_weather', description: 'Weather for a city', input_schema: agentsParameters, strict: true },
      ]);
      const events = await gw.requestEvents(response.headers.get('x-request-id')!);
      const attempt = events.find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];
      expect(attempt.deploymentId).toBe('claude-current');
      expect(attempt.routing.reason).toContain('claude-old (unsupported_parameter: tools[].function.strict)');
    });

    test('streamed: the same translation, and the tool call reaches the client', async () => {
      const stream = await openai.chat.completions.create({
        model: 'claude', stream: true, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [agentsTool], tool_choice: 'required',
      });
      let finish = '';
      let name = '';
      for await (const chunk of stream) {
        finish = chunk.choices[0]?.finish_reason ?? finish;
        name = chunk.choices[0]?.delta.tool_calls?.[0]?.function?.name ?? name;
      }
      expect(finish).toBe('tool_calls');
      expect(name).toBe('get_weather');
      const upstream = gw.mock.requests();
      expect(upstream).toHaveLength(1);
      expect(upstream[0]).toMatchObject({ format: 'anthropic', model: 'claude-current-upstream' });
      expect(upstream[0].body).toMatchObject({ stream: true, tools: [{ name: 'get_weather', input_schema: agentsParameters, strict: true }] });
    });

    test('strict: false or no strict keeps the first route, and nothing is added to the tool', async () => {
      await openai.chat.completions.create({
        model: 'claude', messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: agentsParameters, strict: false } }],
      });
      const upstream = gw.mock.requests();
      expect(upstream[0].model).toBe('claude-old-upstream');
      expect((upstream[0].body as { tools: object[] }).tools[0]).not.toHaveProperty('strict');
    });
  });

  describe('Anthropic SDK', () => {
    test('strict on an Anthropic tool reaches a strict_tools deployment, buffered and streamed', async () => {
      const tools = [{ name: 'get_weather', input_schema: agentsParameters, strict: true } as Anthropic.Tool];
      const message = await anthropic.messages.create({
        model: 'claude', max_tokens: 100, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, tool_choice: { type: 'any' },
      });
      expect(message.stop_reason).toBe('tool_use');
      const final = await anthropic.messages
        .stream({ model: 'claude', max_tokens: 100, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, tool_choice: { type: 'any' } })
        .finalMessage();
      expect(final.stop_reason).toBe('tool_use');
      const upstream = gw.mock.requests();
      expect(upstream.map((r) => r.model)).toEqual(['claude-current-upstream', 'claude-current-upstream']);
      for (const request of upstream) expect((request.body as { tools: unknown[] }).tools).toEqual([{ name: 'get_weather', input_schema: agentsParameters, strict: true }]);
    });

    test('to an OpenAI-backed alias it becomes tools[].function.strict', async () => {
      await anthropic.messages.create({
        model: 'gpt', max_tokens: 100, messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'get_weather', input_schema: agentsParameters, strict: true } as Anthropic.Tool],
      });
      expect((gw.mock.requests()[0].body as { tools: unknown[] }).tools).toEqual([
        { type: 'function', function: { name: 'get_weather', parameters: agentsParameters, strict: true } },
      ]);
    });
  });

  describe('OpenAI SDK, Responses API', () => {
    const responsesTool = { type: 'function' as const, name: 'get_weather', parameters: agentsParameters, strict: true };

    test('no route can honour strict: 400 naming tools[].strict as a Responses client spells it, nothing sent', async () => {
      const error = await openai.responses.create({ model: 'claude-old', input: 'x', tools: [responsesTool] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('tools[].strict');
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('a strict_tools route gets the tool with tools[].strict', async () => {
      await openai.responses.create({ model: 'claude', input: 'Weather in Paris?', tools: [responsesTool] });
      const upstream = gw.mock.requests();
      expect(upstream[0].model).toBe('claude-current-upstream');
      expect((upstream[0].body as { tools: unknown[] }).tools).toEqual([{ name: 'get_weather', input_schema: agentsParameters, strict: true }]);
    });
  });

  describe('OpenAI SDK → OpenAI-backed alias', () => {
    test('buffered and streamed: the strict tool is passed through unchanged', async () => {
      await openai.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'x' }], tools: [agentsTool] });
      const stream = await openai.chat.completions.create({ model: 'gpt', stream: true, messages: [{ role: 'user', content: 'x' }], tools: [agentsTool] });
      for await (const chunk of stream) void chunk;
      const upstream = gw.mock.requests();
      expect(upstream).toHaveLength(2);
      for (const request of upstream) {
        expect(request).toMatchObject({ format: 'openai', model: 'gpt-upstream' });
        expect((request.body as { tools: unknown[] }).tools).toEqual([agentsTool]);
      }
    });
  });
});
