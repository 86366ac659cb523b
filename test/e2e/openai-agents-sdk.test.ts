import { Agent, type AgentOutputType, type ModelSettings, OpenAIProvider, Runner, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import type { AttemptFinished } from '../../events/request-events.js';
import { MOCK_REASONING } from '../../modules/providers/mock/mock-script.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { SURVEY_CREDENTIALS_ENV, surveyYaml } from '../support/survey-yaml.js';

const WORDS = 'Switchyard routes this mock answer through one gateway with exact usage and';

/**
 * The OpenAI Agents SDK (`@openai/agents` 0.20, pinned by package-lock) against every provider format: an
 * agent with one function tool (the SDK declares every tool `strict: true`) makes a tool-call round trip,
 * with the SDK's Chat Completions model and with its Responses model, buffered and streamed.
 */
describe('OpenAI Agents SDK', () => {
  let gw: TestGateway;
  let calls: string[];

  const weather = tool({
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return `18°C in ${city}`;
    },
  });
  function runner(useResponses: boolean): Runner {
    return new Runner({ modelProvider: new OpenAIProvider({ apiKey: gw.key, baseURL: `${gw.url}/v1`, useResponses }), tracingDisabled: true });
  }
  function agent(model: string, modelSettings: ModelSettings = {}): Agent<unknown, AgentOutputType> {
    return new Agent({ name: 'Forecaster', instructions: 'Answer weather questions with the tool.', model, tools: [weather], modelSettings });
  }
  async function runBuffered<Output extends AgentOutputType>(useResponses: boolean, chosen: Agent<unknown, Output>): Promise<unknown> {
    return (await runner(useResponses).run(chosen, 'Weather in Paris?')).finalOutput;
  }

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

  for (const api of ['chat', 'responses'] as const) {
    for (const model of ['gpt', 'claude', 'gemini']) {
      for (const streamed of [false, true]) {
        test(`${api} model, ${model}, ${streamed ? 'streamed' : 'buffered'}: strict tool round trip`, async () => {
          const run = runner(api === 'responses');
          let output: unknown;
          if (streamed) {
            const result = await run.run(agent(model), 'Weather in Paris?', { stream: true });
            let textDeltas = 0;
            for await (const event of result) if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') textDeltas++;
            await result.completed;
            expect(textDeltas).toBeGreaterThan(0);
            output = result.finalOutput;
          } else {
            output = (await run.run(agent(model), 'Weather in Paris?')).finalOutput;
          }
          expect(output).toBe(WORDS);
          expect(calls).toEqual(['Paris']);
          const upstream = gw.mock.requests();
          expect(upstream).toHaveLength(2);
          const first = JSON.stringify(upstream[0].body);
          if (model === 'claude') expect(upstream[0].body).toMatchObject({ tools: [{ name: 'get_weather', strict: true }] });
          if (model === 'gpt') expect(first).toContain('"strict":true');
          // The second call carries the tool's result back.
          expect(JSON.stringify(upstream[1].body)).toContain('18°C in Paris');
        });
      }
    }
  }
  describe('Bedrock: Converse tool specs have no strict mode', () => {
    test('the SDK\'s default strict tools are refused by name (in each API\'s spelling), nothing sent', async () => {
      const error = await runBuffered(false, agent('bedrock')).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400 });
      expect(String((error as Error).message)).toContain("'tools[].function.strict'");
      const viaResponses = await runBuffered(true, agent('bedrock')).catch((e: unknown) => e);
      expect(viaResponses).toMatchObject({ status: 400 });
      expect(String((viaResponses as Error).message)).toContain("'tools[].strict'");
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('a tool declared strict: false (a JSON-schema tool) makes the round trip', async () => {
      const loose = tool({
        name: 'get_weather',
        description: 'Weather for a city',
        strict: false,
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: true },
        execute: async (input) => {
          calls.push((input as { city: string }).city);
          return '18°C';
        },
      });
      const output = await runBuffered(false, new Agent({ name: 'Forecaster', instructions: 'Use the tool.', model: 'bedrock', tools: [loose] }));
      expect(output).toBe(WORDS);
      expect(calls).toEqual(['Paris']);
      expect(gw.mock.requests()[0].body).toMatchObject({ toolConfig: { tools: [{ toolSpec: { name: 'get_weather' } }] } });
    });
  });

  describe('reasoning on Claude routes: the SDK keeps no thinking, so the continuation goes without it', () => {
    for (const api of ['chat', 'responses'] as const) {
      for (const model of ['claude', 'bedrock'] as const) {
        if (model === 'bedrock' && api === 'responses') continue;
        test(`${api} model, ${model}: thinking on the first step, none on the tool-result step, the run completes`, async () => {
          // Bedrock refuses strict tools, so its agent uses a JSON-schema tool.
          const tools = model === 'bedrock'
            ? [tool({ name: 'get_weather', description: 'Weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: true }, execute: async () => '18°C in Paris' })]
            : [weather];
          const thinker = new Agent({ name: 'Thinker', instructions: 'Use the tool.', model, tools, modelSettings: { reasoning: { effort: 'low' }, maxTokens: 8000 } });
          expect(await runBuffered(api === 'responses', thinker)).toBe(WORDS);
          // Streamed, the same two steps.
          const streamed = await runner(api === 'responses').run(thinker, 'Weather in Paris?', { stream: true });
          for await (const _event of streamed) { /* drain */ }
          await streamed.completed;
          expect(streamed.finalOutput).toBe(WORDS);
          expect(gw.mock.requests()).toHaveLength(4);
          const streamedSecond = gw.mock.requests()[3].body as Record<string, any>;
          if (model === 'claude') expect(streamedSecond).not.toHaveProperty('thinking');
          else expect(streamedSecond.additionalModelRequestFields?.thinking).toBeUndefined();
          const [first, second] = gw.mock.requests().map((r) => r.body as Record<string, any>);
          if (model === 'claude') {
            expect(first.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
            expect(second).not.toHaveProperty('thinking');
          } else {
            expect(first.additionalModelRequestFields.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
            expect(second.additionalModelRequestFields?.thinking).toBeUndefined();
          }
          expect(JSON.stringify(second)).toContain('18°C in Paris');
          expect(JSON.stringify(first)).not.toContain(MOCK_REASONING[0]);
        });
      }
    }
  });

  describe('structured output (outputType: a zod schema)', () => {
    const Forecast = z.object({ city: z.string(), celsius: z.number() });
    for (const api of ['chat', 'responses'] as const) {
      for (const model of ['gpt', 'claude', 'gemini']) {
        test(`${api} model, ${model}: the final output is the parsed object`, async () => {
          const forecaster = new Agent({ name: 'Forecaster', instructions: 'Give the forecast.', model, outputType: Forecast });
          expect(await runBuffered(api === 'responses', forecaster)).toEqual({ city: 'Paris', celsius: 42 });
          const body = gw.mock.requests()[0].body as Record<string, any>;
          if (model === 'gpt') expect(body.response_format).toMatchObject({ type: 'json_schema', json_schema: { strict: true } });
          if (model === 'claude') expect(body.output_config).toMatchObject({ format: { type: 'json_schema' } });
          if (model === 'gemini') expect(body.generationConfig).toMatchObject({ responseMimeType: 'application/json' });
        });
      }
    }
  });

  describe('model settings', () => {
    test('responses model: text.verbosity and a 24h prompt-cache retention reach an OpenAI route', async () => {
      const output = await runBuffered(true, agent('gpt', { text: { verbosity: 'low' }, promptCacheRetention: '24h' }));
      expect(output).toBe(WORDS);
      expect(gw.mock.requests()[0].body).toMatchObject({ verbosity: 'low', prompt_cache_retention: '24h' });
    });

    test('responses model: the same settings on a Claude route are refused naming the first, nothing sent', async () => {
      const error = await runBuffered(true, agent('claude', { text: { verbosity: 'low' }, promptCacheRetention: '24h' })).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400 });
      expect(String((error as Error).message)).toContain("'text.verbosity'");
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('chat model: parallelToolCalls false becomes disable_parallel_tool_use on a Claude route', async () => {
      expect(await runBuffered(false, agent('claude', { parallelToolCalls: false }))).toBe(WORDS);
      expect(gw.mock.requests()[0].body).toMatchObject({ tool_choice: { type: 'auto', disable_parallel_tool_use: true } });
    });
  });

  describe('what a route accepts but cannot send is named on the answer', () => {
    const strictTool: OpenAI.ChatCompletionTool = {
      type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }, strict: true },
    };

    test('Gemini: the strict flag (a hint there) is named in x-switchyard-unsent-parameters and recorded on the attempt', async () => {
      const openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const { response } = await openai.chat.completions.create({ model: 'gemini', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [strictTool] }).withResponse();
      expect(response.headers.get('x-switchyard-unsent-parameters')).toBe('tools[].function.strict');
      const attempt = (await gw.requestEvents(response.headers.get('x-request-id')!)).find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];
      expect(attempt.unsentParameters).toEqual(['tools[].function.strict']);
      // Streamed, and through the Responses API under its own name.
      const stream = await openai.responses.create({ model: 'gemini', input: 'Weather in Paris?', stream: true, tools: [{ type: 'function', name: 'get_weather', parameters: strictTool.function.parameters!, strict: true }] }).withResponse();
      for await (const _event of stream.data) { /* drain */ }
      expect(stream.response.headers.get('x-switchyard-unsent-parameters')).toBe('tools[].strict');
    });

    test('a route that sends everything carries no such header', async () => {
      const openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const { response } = await openai.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [strictTool] }).withResponse();
      expect(response.headers.get('x-switchyard-unsent-parameters')).toBeNull();
      const attempt = (await gw.requestEvents(response.headers.get('x-request-id')!)).find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];
      expect(attempt).not.toHaveProperty('unsentParameters');
    });
  });
});
