import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { ChatAnthropic } from '@langchain/anthropic';
import { AIMessageChunk } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { Output, generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { MOCK_REASONING, mockSignature } from '../../modules/providers/mock/mock-script.js';
import { FIDELITY_CREDENTIALS_ENV, fidelityYaml } from '../support/fidelity-yaml.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';

const THINKING = MOCK_REASONING.join('');
const WORDS = 'Switchyard routes this mock answer through one gateway with exact usage and';
const weatherSchema = { type: 'object' as const, properties: { city: { type: 'string' as const } }, required: ['city'], additionalProperties: false };

/**
 * Two widely used third-party client libraries, pinned by package-lock (Vercel AI SDK `ai` 6 with
 * `@ai-sdk/openai` 3 and `@ai-sdk/anthropic` 3; LangChain `@langchain/openai` 1.4 and `@langchain/anthropic` 1.5),
 * against the same aliases of every provider format as protocol-fidelity.test.ts.
 */
describe('third-party clients: Vercel AI SDK and LangChain', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    process.env[FIDELITY_CREDENTIALS_ENV] = 'AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
    gw = await startTestGateway({ yaml: fidelityYaml });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  describe('Vercel AI SDK', () => {
    test('@ai-sdk/openai chat model: penalties and seed reach the OpenAI route', async () => {
      const openai = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
      const result = await generateText({ model: openai.chat('gpt'), prompt: 'Hello', frequencyPenalty: 0.3, presencePenalty: 0.2, seed: 5, maxRetries: 0 });
      expect(result.text).toBe(WORDS);
      expect(gw.mock.requests()[0].body).toMatchObject({ frequency_penalty: 0.3, presence_penalty: 0.2, seed: 5 });
    });

    test('@ai-sdk/openai structured output (Output.object) through a Gemini route', async () => {
      const openai = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
      const result = await generateText({ model: openai.chat('gemini'), prompt: 'Weather as JSON', output: Output.object({ schema: jsonSchema<{ city: string }>(weatherSchema) }), maxRetries: 0 });
      expect(result.output).toEqual({ city: 'Paris' });
      expect(gw.mock.requests()[0].body).toMatchObject({ generationConfig: { responseMimeType: 'application/json' } });
    });

    for (const model of ['claude', 'bedrock', 'gpt']) {
      test(`@ai-sdk/anthropic streamText with thinking and a tool round trip (${model}): eager_input_streaming accepted, signatures kept`, async () => {
        const anthropic = createAnthropic({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
        const result = streamText({
          model: anthropic(model),
          prompt: 'Weather in Paris?',
          maxOutputTokens: 4000,
          maxRetries: 0,
          tools: { get_weather: tool({ description: 'Weather for a city', inputSchema: jsonSchema<{ city: string }>(weatherSchema), execute: async () => '18°C' }) },
          stopWhen: stepCountIs(2),
          providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 2000 } } },
        });
        expect(await result.text).toBe(WORDS);
        const usage = await result.totalUsage;
        expect(usage.inputTokens).toBeGreaterThan(0);
        const requests = gw.mock.requests();
        expect(requests).toHaveLength(2);
        if (model === 'claude') {
          expect(requests[0].body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2000 }, tools: [{ name: 'get_weather', eager_input_streaming: true }] });
          // The second step sent the signed thinking back; the mock verified it like Anthropic.
          const history = (requests[1].body as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> }).messages;
          expect(history[1].content[0]).toEqual({ type: 'thinking', thinking: THINKING, signature: mockSignature(THINKING) });
        }
        if (model === 'gpt') expect(requests[0].body).toMatchObject({ reasoning_effort: 'low' });
        expect((await result.steps)[0].reasoningText).toBe(THINKING);
      });
    }
  });

  describe('LangChain', () => {
    test('ChatOpenAI: presence and frequency penalties reach the OpenAI route', async () => {
      const chat = new ChatOpenAI({ model: 'gpt', apiKey: gw.key, configuration: { baseURL: `${gw.url}/v1` }, presencePenalty: 0.6, frequencyPenalty: 0.1, maxRetries: 0 });
      const answer = await chat.invoke('Hello');
      expect(answer.content).toBe(WORDS);
      expect(gw.mock.requests()[0].body).toMatchObject({ presence_penalty: 0.6, frequency_penalty: 0.1 });
    });

    test('ChatAnthropic streaming with top_k: input tokens counted from message_start, output from message_delta', async () => {
      const chat = new ChatAnthropic({ model: 'claude', apiKey: gw.key, anthropicApiUrl: gw.url, topK: 5, maxTokens: 100, maxRetries: 0 });
      let merged: AIMessageChunk | undefined;
      for await (const chunk of await chat.stream('Count my input tokens please')) merged = merged ? merged.concat(chunk) : chunk;
      expect(gw.mock.requests()[0].body).toMatchObject({ top_k: 5, stream: true });
      // 'Count my input tokens please' → the mock's 7 + 3; LangChain adds message_start's count to message_delta's.
      expect(merged!.usage_metadata).toMatchObject({ input_tokens: 10, output_tokens: 12 });
    });

    test('ChatAnthropic with thinking on a Gemini route: the budget becomes thinkingConfig, thoughts come back as a thinking block', async () => {
      const chat = new ChatAnthropic({ model: 'gemini', apiKey: gw.key, anthropicApiUrl: gw.url, maxTokens: 4000, thinking: { type: 'enabled', budget_tokens: 3000 }, maxRetries: 0 });
      const answer = await chat.invoke('Think');
      expect(gw.mock.requests()[0].body).toMatchObject({ generationConfig: { thinkingConfig: { thinkingBudget: 3000, includeThoughts: true } } });
      expect(answer.content).toEqual([expect.objectContaining({ type: 'thinking', thinking: THINKING }), expect.objectContaining({ type: 'text', text: WORDS })]);
    });
  });
});
