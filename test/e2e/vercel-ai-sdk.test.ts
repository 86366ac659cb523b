import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import type { RequestAdmitted } from '../../events/request-events.js';
import {
  BEDROCK_CREDENTIALS,
  BEDROCK_CREDENTIALS_ENV,
  PROVIDER_FORMATS,
  type ProviderFormat,
  TOOL_RESULT,
  conformanceYaml,
  plannedText,
} from '../support/conformance.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';

/**
 * The Vercel AI SDK (`ai` 6 with `@ai-sdk/openai` 3, pinned in package.json), whose default OpenAI
 * model speaks the Responses API, against an alias of every provider format: generateText, streamText
 * and a two-step tool loop. Fed an earlier answer (`response.messages`), the AI SDK refers to it by
 * item id unless `store` is false; Switchyard keeps no state, so that needs `store: false` (docs/api.md),
 * and without it the request gets a 400 saying so.
 */
const PROMPT = 'Say hello';
const planned = plannedText(PROMPT);

describe('Vercel AI SDK (@ai-sdk/openai Responses model) against the gateway', () => {
  let gw: TestGateway;
  let openai: ReturnType<typeof createOpenAI>;

  beforeAll(async () => {
    process.env[BEDROCK_CREDENTIALS_ENV] = BEDROCK_CREDENTIALS;
    gw = await startTestGateway({ yaml: conformanceYaml });
    openai = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  const weather = () =>
    tool({
      description: 'The weather in a city',
      inputSchema: z.object({ city: z.string() }),
      execute: async () => JSON.parse(TOOL_RESULT) as Record<string, unknown>,
    });

  describe.each(PROVIDER_FORMATS.map((p) => [p.type, p] as [string, ProviderFormat]))('%s-backed alias', (_type, provider) => {
    test('generateText: the planned text and usage, through /v1/responses', async () => {
      const result = await generateText({ model: openai(provider.alias), prompt: PROMPT, maxRetries: 0 });
      expect(result.text).toBe(planned.text);
      expect(result.finishReason).toBe('stop');
      expect(result.usage).toMatchObject({ inputTokens: planned.usage.prompt, outputTokens: planned.usage.completion });
      const requestId = result.response.headers?.['x-request-id'];
      const admitted = (await gw.requestEvents(requestId!)).find((e) => e.type === 'RequestAdmitted')!.data as RequestAdmitted['data'];
      expect(admitted).toMatchObject({ clientFormat: 'responses', alias: provider.alias, stream: false });
      expect(gw.mock.requests()).toHaveLength(1);
    });

    test('streamText: the text arrives in pieces and adds up to the planned text; usage at the end', async () => {
      const errors: unknown[] = [];
      const result = streamText({ model: openai(provider.alias), prompt: PROMPT, maxRetries: 0, onError: ({ error }) => void errors.push(error) });
      const pieces: string[] = [];
      for await (const piece of result.textStream) pieces.push(piece);
      expect(errors).toEqual([]);
      expect(pieces.join('')).toBe(planned.text);
      expect(pieces.length).toBeGreaterThanOrEqual(1);
      expect(await result.finishReason).toBe('stop');
      expect(await result.usage).toMatchObject({ inputTokens: planned.usage.prompt, outputTokens: planned.usage.completion });
      expect(gw.mock.requests()[0]).toMatchObject({ stream: true, outcome: 'completed' });
    });

    test('a tool loop: the call is executed, its output goes back as function_call_output, the model answers in text', async () => {
      const result = await generateText({
        model: openai(provider.alias),
        prompt: 'Weather in Paris?',
        tools: { get_weather: weather() },
        stopWhen: stepCountIs(3),
        maxRetries: 0,
      });
      expect(result.steps).toHaveLength(2);
      expect(result.steps[0].toolCalls).toEqual([expect.objectContaining({ toolName: 'get_weather', input: { city: 'Paris' } })]);
      expect(result.text).toBe(planned.text);
      const calls = gw.mock.requests();
      expect(calls).toHaveLength(2);
      expect(JSON.stringify(calls[1].body)).toMatch(/temperature\\?":18/);
    });

    test('a streamed tool loop: the call streams in, is executed, and the answer streams back', async () => {
      const errors: unknown[] = [];
      const result = streamText({
        model: openai(provider.alias),
        prompt: 'Weather in Paris?',
        tools: { get_weather: weather() },
        stopWhen: stepCountIs(3),
        maxRetries: 0,
        onError: ({ error }) => void errors.push(error),
      });
      let text = '';
      for await (const piece of result.textStream) text += piece;
      expect(errors).toEqual([]);
      expect(text).toBe(planned.text);
      const steps = await result.steps;
      expect(steps).toHaveLength(2);
      expect(steps[0].toolCalls).toEqual([expect.objectContaining({ toolName: 'get_weather', input: { city: 'Paris' } })]);
      expect(gw.mock.requests().map((r) => r.stream)).toEqual([true, true]);
    });
  });

  test('multi-turn from response.messages: with store unset the SDK references the earlier answer by id → a 400 naming the fix; with store: false it works', async () => {
    const provider = PROVIDER_FORMATS[0];
    const first = await generateText({ model: openai(provider.alias), prompt: PROMPT, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: PROMPT }, ...first.response.messages, { role: 'user' as const, content: PROMPT }];
    gw.mock.clearRequests();
    const failure = await generateText({ model: openai(provider.alias), messages, maxRetries: 0 }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ statusCode: 400 });
    expect(String((failure as { responseBody?: string }).responseBody)).toMatch(/item_reference.*store: false/);
    expect(gw.mock.requests()).toHaveLength(0);
    const second = await generateText({ model: openai(provider.alias), messages, maxRetries: 0, providerOptions: { openai: { store: false } } });
    expect(second.text).toBe(planned.text);
    // The earlier answer went upstream as the assistant's turn.
    expect(JSON.stringify(gw.mock.requests()[0].body)).toContain(first.text);
  });
});
