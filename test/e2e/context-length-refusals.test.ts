import Anthropic from '@anthropic-ai/sdk';
import { ChatAnthropic } from '@langchain/anthropic';
import { ContextOverflowError } from '@langchain/core/errors';
import { ChatOpenAI } from '@langchain/openai';
import OpenAI from 'openai';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { acmeKeyYaml, mockProviderYaml } from '../support/anthropic-yaml.js';

/**
 * Small windows so a short prompt overflows them: `tight` offers an Anthropic route of 1 000 tokens and
 * an OpenAI-compatible one of 1 200 (the largest, tight#2); `claude`, `gpt` and `gemini` are roomy, and the
 * mock provider refuses for them in its own words when a test says so.
 */
function contextYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
${mockProviderYaml('mock-anthropic', 'anthropic', mockUrl)}${mockProviderYaml('mock-openai', 'openai-compatible', `${mockUrl}/v1`)}${mockProviderYaml('mock-gemini', 'gemini', mockUrl)}deployments:
  - id: claude-small
    provider: mock-anthropic
    model: claude-small-upstream
    capabilities: [chat, streaming]
    contextWindow: 1000
    maxOutputTokens: 500
    price: { inputPer1M: "3.00", outputPer1M: "15.00" }
  - id: gpt-small
    provider: mock-openai
    model: gpt-small-upstream
    capabilities: [chat, streaming]
    contextWindow: 1200
    maxOutputTokens: 400
    price: { inputPer1M: "2.50", outputPer1M: "10.00" }
  - id: claude-roomy
    provider: mock-anthropic
    model: claude-upstream
    capabilities: [chat, streaming]
    contextWindow: 200000
    maxOutputTokens: 8192
    price: { inputPer1M: "3.00", outputPer1M: "15.00" }
  - id: gpt-roomy
    provider: mock-openai
    model: gpt-upstream
    capabilities: [chat, streaming]
    contextWindow: 128000
    maxOutputTokens: 16384
    price: { inputPer1M: "2.50", outputPer1M: "10.00" }
  - id: gemini-roomy
    provider: mock-gemini
    model: gemini-upstream
    capabilities: [chat, streaming]
    contextWindow: 1048576
    maxOutputTokens: 8192
    price: { inputPer1M: "0.30", outputPer1M: "2.50" }
  - id: embed-small
    provider: mock-openai
    model: embed-upstream
    capabilities: [embeddings]
    contextWindow: 1000
    maxOutputTokens: 1
    price: { inputPer1M: "0.02", outputPer1M: "0" }
aliases:
  - name: tight
    routes:
      - { deployment: claude-small, priority: 0 }
      - { deployment: gpt-small, priority: 1 }
  - name: claude
    routes:
      - { deployment: claude-roomy, priority: 0 }
  - name: gpt
    routes:
      - { deployment: gpt-roomy, priority: 0 }
  - name: gemini
    routes:
      - { deployment: gemini-roomy, priority: 0 }
  - name: embed
    routes:
      - { deployment: embed-small, priority: 0 }
${acmeKeyYaml(keyEnv)}`;
}

/** Far more than any window of `tight`. */
const HUGE = 'word '.repeat(3_000);
/** Fits 1 200 alone, but not beside 400 output tokens. */
const NEAR = 'word '.repeat(900);

const ANTHROPIC_UPSTREAM_REFUSAL = 'prompt is too long: 208310 tokens > 200000 maximum';
const GEMINI_UPSTREAM_REFUSAL = 'The input token count (1243839) exceeds the maximum number of tokens allowed (1048576).';
const OPENAI_UPSTREAM_REFUSAL = "This model's maximum context length is 128000 tokens. However, you requested 130000 tokens (129000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.";

async function refusal(call: () => Promise<unknown>): Promise<{ status: number; error: Record<string, unknown>; message: string }> {
  try {
    await call();
  } catch (thrown) {
    if (thrown instanceof OpenAI.APIError) return { status: thrown.status!, error: thrown.error as Record<string, unknown>, message: (thrown.error as { message: string }).message };
    if (thrown instanceof Anthropic.APIError) {
      const error = (thrown.error as { error: Record<string, unknown> }).error;
      return { status: thrown.status!, error, message: error.message as string };
    }
    throw thrown;
  }
  throw new Error('the call succeeded');
}

describe('context-length refusals, in each client\'s words, with the numbers', () => {
  let gw: TestGateway;
  let anthropic: Anthropic;
  let openai: OpenAI;

  beforeAll(async () => {
    gw = await startTestGateway({ yaml: contextYaml });
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
  afterEach(() => {
    gw.mock.clearScenarios();
  });

  describe('no route\'s window holds the request: nothing goes upstream', () => {
    test.each([false, true])('OpenAI SDK (stream %s): 400 context_length_exceeded in OpenAI\'s sentence, the largest window and its route', async (stream) => {
      const got = await refusal(() => openai.chat.completions.create({ model: 'tight', stream, max_tokens: 300, messages: [{ role: 'user', content: HUGE }] }));
      expect(got.status).toBe(400);
      expect(got.error).toMatchObject({ type: 'invalid_request_error', code: 'context_length_exceeded', param: 'messages', context_window: 1200, output_tokens: 300, route: 'tight#2' });
      const input = got.error.input_tokens as number;
      expect(input).toBeGreaterThan(3_000);
      expect(got.message).toBe(
        `This model's maximum context length is 1200 tokens. However, you requested ${input + 300} tokens (${input} in the messages, 300 in the completion). `
        + "Please reduce the length of the messages or completion. (the largest context window on offer is route tight#2's; the input count is the gateway's estimate)",
      );
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('OpenAI SDK without max_tokens: the defaulted output, capped at the largest route\'s output limit', async () => {
      const got = await refusal(() => openai.chat.completions.create({ model: 'tight', messages: [{ role: 'user', content: NEAR }] }));
      expect(got.error).toMatchObject({ code: 'context_length_exceeded', context_window: 1200, output_tokens: 400, route: 'tight#2' });
      expect(got.error.input_tokens as number).toBeLessThan(1200);
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test.each([false, true])('Anthropic SDK (stream %s): invalid_request_error "prompt is too long: N tokens > M maximum"', async (stream) => {
      const got = await refusal(() => (stream
        ? anthropic.messages.stream({ model: 'tight', max_tokens: 300, messages: [{ role: 'user', content: HUGE }] }).finalMessage()
        : anthropic.messages.create({ model: 'tight', max_tokens: 300, messages: [{ role: 'user', content: HUGE }] })));
      expect(got.status).toBe(400);
      expect(got.error.type).toBe('invalid_request_error');
      expect(got.message).toMatch(/^prompt is too long: (\d+) tokens > 1200 maximum \(the largest context window on offer is route tight#2's; the input count is the gateway's estimate\)$/);
      expect(Number(/: (\d+) tokens/.exec(got.message)![1])).toBeGreaterThan(3_000);
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('Anthropic SDK, a prompt that fits only without its max_tokens: still "prompt is too long" (the total), the split after it', async () => {
      const got = await refusal(() => anthropic.messages.create({ model: 'tight', max_tokens: 400, messages: [{ role: 'user', content: NEAR }] }));
      const said = /^prompt is too long: (\d+) tokens > 1200 maximum \((\d+) input tokens \+ 400 max_tokens; the largest context window on offer is route tight#2's/.exec(got.message);
      expect(said).not.toBeNull();
      expect(Number(said![2])).toBeLessThan(1200);
      expect(Number(said![1])).toBe(Number(said![2]) + 400);
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('LangChain (ChatOpenAI on Chat Completions and Responses, ChatAnthropic, buffered and streamed) raises its ContextOverflowError', async () => {
      const overflows = async (run: () => Promise<unknown>) => {
        const thrown = await run().then(() => null, (error: unknown) => error);
        expect(ContextOverflowError.isInstance(thrown)).toBe(true);
      };
      const chatOpenAI = new ChatOpenAI({ model: 'tight', apiKey: gw.key, configuration: { baseURL: `${gw.url}/v1` }, maxTokens: 300, maxRetries: 0 });
      await overflows(() => chatOpenAI.invoke(HUGE));
      await overflows(async () => {
        for await (const chunk of await chatOpenAI.stream(HUGE)) void chunk;
      });
      const responsesOpenAI = new ChatOpenAI({ model: 'tight', apiKey: gw.key, configuration: { baseURL: `${gw.url}/v1` }, useResponsesApi: true, maxRetries: 0 });
      await overflows(() => responsesOpenAI.invoke(HUGE));
      const chatAnthropic = new ChatAnthropic({ model: 'tight', apiKey: gw.key, anthropicApiUrl: gw.url, maxTokens: 400, maxRetries: 0 });
      await overflows(() => chatAnthropic.invoke(HUGE));
      await overflows(() => chatAnthropic.invoke(NEAR));
      await overflows(async () => {
        for await (const chunk of await chatAnthropic.stream(NEAR)) void chunk;
      });
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test('OpenAI SDK embeddings: the longest input against the window, no completion, param input', async () => {
      const got = await refusal(() => openai.embeddings.create({ model: 'embed', input: ['short', HUGE], encoding_format: 'float' }));
      expect(got.status).toBe(400);
      expect(got.error).toMatchObject({ code: 'context_length_exceeded', param: 'input', output_tokens: null, context_window: 1000, route: 'embed#1' });
      expect(got.message).toMatch(/^This model's maximum context length is 1000 tokens\. However, your messages resulted in \d+ tokens\./);
      expect(gw.mock.requests()).toHaveLength(0);
    });

    test.each([false, true])('Responses API (stream %s): its own sentence, param input, the numbers after it', async (stream) => {
      const got = await refusal(() => openai.responses.create({ model: 'tight', stream, max_output_tokens: 300, input: HUGE }));
      expect(got.status).toBe(400);
      expect(got.error).toMatchObject({ type: 'invalid_request_error', code: 'context_length_exceeded', param: 'input', context_window: 1200, output_tokens: 300 });
      expect(got.message).toMatch(/^Your input exceeds the context window of this model\. Please adjust your input and try again\. \(\d+ input tokens \+ 300 output tokens > 1200 maximum; the largest context window on offer is route tight#2's/);
      expect(gw.mock.requests()).toHaveLength(0);
    });
  });

  describe('the provider refuses in its own words: the client reads them in its own, once, with the provider\'s numbers', () => {
    test.each([false, true])('Anthropic upstream "prompt is too long" → OpenAI SDK (stream %s)', async (stream) => {
      gw.mock.addScenario({ model: 'claude-upstream', behaviour: { status: 400, errorMessage: ANTHROPIC_UPSTREAM_REFUSAL } });
      const got = await refusal(() => openai.chat.completions.create({ model: 'claude', stream, messages: [{ role: 'user', content: 'Hello' }] }));
      expect(got.status).toBe(400);
      expect(got.error).toMatchObject({ type: 'invalid_request_error', code: 'context_length_exceeded', input_tokens: 208310, output_tokens: null, context_window: 200000, route: null });
      expect(got.message).toMatch(/^This model's maximum context length is 200000 tokens\. However, your messages resulted in 208310 tokens\. Please reduce the length of the messages\./);
      expect(gw.mock.requests()).toHaveLength(1);
      expect(gw.mock.requests()[0]).toMatchObject({ format: 'anthropic', model: 'claude-upstream', stream });
    });

    test.each([false, true])('Anthropic upstream "prompt is too long" → Anthropic SDK (stream %s): Anthropic\'s sentence again', async (stream) => {
      gw.mock.addScenario({ model: 'claude-upstream', behaviour: { status: 400, errorMessage: ANTHROPIC_UPSTREAM_REFUSAL } });
      const params = { model: 'claude', max_tokens: 300, messages: [{ role: 'user' as const, content: 'Hello' }] };
      const got = await refusal(() => (stream ? anthropic.messages.stream(params).finalMessage() : anthropic.messages.create(params)));
      expect(got.status).toBe(400);
      expect(got.error.type).toBe('invalid_request_error');
      expect(got.message).toMatch(/^prompt is too long: 208310 tokens > 200000 maximum/);
      expect(gw.mock.requests()).toHaveLength(1);
    });

    test.each([false, true])('OpenAI upstream 400 context_length_exceeded → Anthropic SDK (stream %s): its prompt alone is over, so "prompt is too long"', async (stream) => {
      gw.mock.addScenario({ model: 'gpt-upstream', behaviour: { status: 400, errorMessage: OPENAI_UPSTREAM_REFUSAL } });
      const params = { model: 'gpt', max_tokens: 1000, messages: [{ role: 'user' as const, content: 'Hello' }] };
      const got = await refusal(() => (stream ? anthropic.messages.stream(params).finalMessage() : anthropic.messages.create(params)));
      expect(got.status).toBe(400);
      expect(got.error.type).toBe('invalid_request_error');
      expect(got.message).toMatch(/^prompt is too long: 129000 tokens > 128000 maximum/);
      expect(gw.mock.requests()).toHaveLength(1);
      expect(gw.mock.requests()[0]).toMatchObject({ format: 'openai', model: 'gpt-upstream', stream });
    });

    test.each([false, true])('OpenAI upstream → OpenAI SDK (stream %s) and Responses: OpenAI\'s own sentence and numbers', async (stream) => {
      gw.mock.addScenario({ model: 'gpt-upstream', behaviour: { status: 400, errorMessage: OPENAI_UPSTREAM_REFUSAL } });
      const chat = await refusal(() => openai.chat.completions.create({ model: 'gpt', stream, max_tokens: 1000, messages: [{ role: 'user', content: 'Hello' }] }));
      expect(chat.error).toMatchObject({ code: 'context_length_exceeded', param: 'messages', input_tokens: 129000, output_tokens: 1000, context_window: 128000 });
      expect(chat.message).toMatch(/^This model's maximum context length is 128000 tokens\. However, you requested 130000 tokens \(129000 in the messages, 1000 in the completion\)\./);
      const responses = await refusal(() => openai.responses.create({ model: 'gpt', stream, input: 'Hello' }));
      expect(responses.error).toMatchObject({ code: 'context_length_exceeded', param: 'input', input_tokens: 129000 });
      expect(responses.message).toMatch(/^Your input exceeds the context window of this model\. Please adjust your input and try again\. \(129000 input tokens \+ 1000 output tokens > 128000 maximum/);
      expect(gw.mock.requests()).toHaveLength(2);
    });

    test.each([false, true])('Gemini upstream 400 "input token count (N) exceeds …" → Anthropic and OpenAI SDKs (stream %s)', async (stream) => {
      gw.mock.addScenario({ model: 'gemini-upstream', behaviour: { status: 400, errorMessage: GEMINI_UPSTREAM_REFUSAL } });
      const params = { model: 'gemini', max_tokens: 300, messages: [{ role: 'user' as const, content: 'Hello' }] };
      const claudeStyle = await refusal(() => (stream ? anthropic.messages.stream(params).finalMessage() : anthropic.messages.create(params)));
      expect(claudeStyle).toMatchObject({ status: 400, error: { type: 'invalid_request_error' } });
      expect(claudeStyle.message).toMatch(/^prompt is too long: 1243839 tokens > 1048576 maximum/);
      const openaiStyle = await refusal(() => openai.chat.completions.create({ model: 'gemini', stream, messages: [{ role: 'user', content: 'Hello' }] }));
      expect(openaiStyle.error).toMatchObject({ code: 'context_length_exceeded', input_tokens: 1243839, context_window: 1048576 });
      expect(gw.mock.requests()).toHaveLength(2);
      expect(gw.mock.requests()[0]).toMatchObject({ format: 'gemini', model: 'gemini-upstream' });
    });
  });
});
