import { Anthropic, AnthropicSession } from '@llamaindex/anthropic';
import { OpenAI } from '@llamaindex/openai';
import { agent, agentStreamEvent, stopAgentEvent } from '@llamaindex/workflow';
import { type ChatMessage, type ToolCallLLM, tool } from 'llamaindex';
import { z } from 'zod';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { SURVEY_CREDENTIALS_ENV, surveyYaml } from '../support/survey-yaml.js';

const WORDS = 'Switchyard routes this mock answer through one gateway with exact usage and';
const hello: ChatMessage[] = [{ role: 'user', content: 'Hello' }];

/**
 * LlamaIndex TS (`llamaindex` 0.12 with `@llamaindex/openai` 0.4, `@llamaindex/anthropic` 0.3 and
 * `@llamaindex/workflow` 1.1, pinned by package-lock) against every provider format, through both of its
 * client classes: chat buffered and streamed, a tool-calling agent run buffered and streamed, and (OpenAI
 * class) structured output from a zod schema.
 */
describe('LlamaIndex TS', () => {
  let gw: TestGateway;
  let calls: string[];

  const weather = tool({
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      calls.push(city);
      return `18°C in ${city}`;
    },
  });
  const clients = {
    openai: (model: string): ToolCallLLM => new OpenAI({ model, apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 }),
    // LlamaIndex's Anthropic class reads no base URL option of its own: the SDK session carries it.
    anthropic: (model: string): ToolCallLLM => new Anthropic({ model, maxTokens: 1000, session: new AnthropicSession({ apiKey: gw.key, baseURL: gw.url, maxRetries: 0 }) }) as unknown as ToolCallLLM,
  };

  beforeAll(async () => {
    process.env[SURVEY_CREDENTIALS_ENV] = 'AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
    gw = await startTestGateway({ yaml: surveyYaml });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    calls = [];
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  for (const [client, make] of Object.entries(clients)) {
    for (const format of ['gpt', 'claude', 'gemini', 'bedrock']) {
      // Aliases with "-4" in their names: LlamaIndex's Anthropic class allows tools only for model names like Claude's.
      const model = `${format}-4`;

      test(`${client} class, ${format}: chat buffered and streamed`, async () => {
        const llm = make(model);
        const answer = await llm.chat({ messages: hello });
        const text = typeof answer.message.content === 'string' ? answer.message.content : answer.message.content.map((part) => ('text' in part ? part.text : '')).join('');
        expect(text).toBe(WORDS);
        let streamed = '';
        for await (const chunk of await llm.chat({ messages: hello, stream: true })) streamed += chunk.delta;
        expect(streamed).toBe(WORDS);
        const upstream = gw.mock.requests();
        expect(upstream).toHaveLength(2);
        expect(JSON.stringify(upstream[0].body)).toContain('Hello');
      });

      test(`${client} class, ${format}: agent with a tool, run buffered`, async () => {
        const result = await agent({ llm: make(model), tools: [weather] }).run('Weather in Paris?');
        expect(result.data.result).toBe(WORDS);
        expect(calls).toEqual(['Paris']);
        const upstream = gw.mock.requests();
        expect(upstream).toHaveLength(2);
        expect(JSON.stringify(upstream[0].body)).toContain('get_weather');
        expect(JSON.stringify(upstream[1].body)).toContain('18°C in Paris');
      });

      test(`${client} class, ${format}: agent with a tool, run streamed`, async () => {
        let deltas = '';
        let result: unknown;
        for await (const event of agent({ llm: make(model), tools: [weather] }).runStream('Weather in Paris?')) {
          if (agentStreamEvent.include(event)) deltas += event.data.delta;
          if (stopAgentEvent.include(event)) result = event.data.result;
        }
        expect(result).toBe(WORDS);
        expect(deltas).toContain(WORDS);
        expect(calls).toEqual(['Paris']);
        expect(gw.mock.requests()).toHaveLength(2);
      });
    }
  }

  describe('structured output (OpenAI class, responseFormat from a zod schema)', () => {
    const Weather = z.object({ city: z.string() });

    for (const format of ['gpt', 'claude', 'gemini']) {
      test(`${format}: the strict json_schema reaches the route in its own terms`, async () => {
        const answer = await clients.openai(format).chat({ messages: [{ role: 'user', content: 'Weather?' }], responseFormat: Weather });
        expect(Weather.parse(JSON.parse(answer.message.content as string))).toEqual({ city: 'Paris' });
        const body = gw.mock.requests()[0].body as Record<string, any>;
        if (format === 'gpt') expect(body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'response_format', strict: true } });
        if (format === 'claude') expect(body.output_config).toMatchObject({ format: { type: 'json_schema' } });
        if (format === 'gemini') expect(body.generationConfig).toMatchObject({ responseMimeType: 'application/json' });
      });
    }

    test('bedrock: Converse has no JSON mode, so the request is refused naming response_format, nothing sent', async () => {
      const error = await clients.openai('bedrock').chat({ messages: [{ role: 'user', content: 'Weather?' }], responseFormat: Weather }).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400 });
      expect(String((error as Error).message)).toContain('json_schema');
      expect(gw.mock.requests()).toHaveLength(0);
    });
  });
});
