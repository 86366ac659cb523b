import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StreamEvent } from '../../modules/canonical/chat-response.js';
import { parseAnthropicMessagesRequest } from '../../modules/inference/formats/anthropic/anthropic-messages-request.js';
import { toAnthropicMessage } from '../../modules/inference/formats/anthropic/anthropic-messages-response.js';
import { AnthropicMessagesStreamEncoder } from '../../modules/inference/formats/anthropic/anthropic-messages-stream.js';
import { parseOpenAiChatRequest } from '../../modules/inference/formats/openai/openai-chat-request.js';
import { toOpenAiCompletion } from '../../modules/inference/formats/openai/openai-chat-response.js';
import { OpenAiChatStreamEncoder } from '../../modules/inference/formats/openai/openai-chat-stream.js';
import { OutputMeter } from '../../modules/inference/pipeline/output-meter.js';
import { fromAnthropicMessage } from '../../modules/providers/anthropic/anthropic-response.js';
import { AnthropicStreamTranslator } from '../../modules/providers/anthropic/anthropic-stream.js';
import { fromGeminiResponse } from '../../modules/providers/gemini/gemini-response.js';
import { fromOpenAiCompletion } from '../../modules/providers/openai/openai-response.js';
import { OpenAiStreamTranslator } from '../../modules/providers/openai/openai-stream.js';
import { SseDecoder } from '../../modules/providers/streaming/sse-decoder.js';
import { believedUsage, encodeRelayed, reported } from '../support/believed-usage.js';
import { checkReportedPrompt } from '../../modules/canonical/index.js';

const identity = { id: 'msg_abc', created: 1700000000, model: 'alias' };

function anthropicEvents(name: string): StreamEvent[] {
  const decoder = new SseDecoder();
  const translator = new AnthropicStreamTranslator();
  const events: StreamEvent[] = [];
  for (const frame of decoder.push(readFileSync(join(process.cwd(), 'test/fixtures/anthropic', name)))) events.push(...translator.translate(frame));
  for (const frame of decoder.end()) events.push(...translator.translate(frame));
  return events;
}

function sseFrames(wire: string): Array<{ event: string | null; data: any }> {
  return wire
    .split('\n\n')
    .filter((block) => block.trim().length > 0)
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? null;
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? '';
      return { event, data: data === '[DONE]' ? data : JSON.parse(data) };
    });
}

describe('reasoning and prompt usage through the provider translators', () => {
  test('Anthropic stream: the prompt count at message_start, thinking deltas, the signature, a redacted block, then text', () => {
    const events = anthropicEvents('stream-thinking.sse');
    const [prompt, ...rest] = events;
    expect(prompt.type === 'prompt_usage' && checkReportedPrompt(prompt.usage, { input: 1000, output: 1000 })).toEqual({ input: 200, cachedInput: 50, cacheWrite: 30 });
    expect(rest.slice(0, 5)).toEqual([
      { type: 'reasoning', choice: 0, part: 0, text: 'I need to find the GCD of 1071 and 462 ' },
      { type: 'reasoning', choice: 0, part: 0, text: 'using the Euclidean algorithm.' },
      { type: 'reasoning_signature', choice: 0, part: 0, signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' },
      { type: 'reasoning_redacted', choice: 0, part: 1, data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP' },
      { type: 'text', choice: 0, text: 'The GCD is 21.' },
    ]);
    const last = events.at(-1)!;
    expect(last.type === 'usage' && believedUsage(last.usage)).toEqual({ input: 200, cachedInput: 50, cacheWrite: 30, output: 85, reasoning: 0 });
  });

  test('Anthropic buffered: thinking and redacted_thinking blocks become reasoning parts with signatures', () => {
    const response = fromAnthropicMessage({
      id: 'msg_1', type: 'message', role: 'assistant', model: 'c', stop_reason: 'end_turn', stop_sequence: null,
      content: [{ type: 'thinking', thinking: 'Hmm.', signature: 'sig' }, { type: 'redacted_thinking', data: 'opaque' }, { type: 'text', text: 'Hi' }],
      usage: { input_tokens: 5, output_tokens: 7 },
    });
    expect(response.choices[0]).toMatchObject({ text: 'Hi', reasoning: [{ type: 'thinking', text: 'Hmm.', signature: 'sig' }, { type: 'redacted_thinking', data: 'opaque' }] });
  });

  test('OpenAI-compatible servers: reasoning_content (or reasoning) and logprobs, buffered and streamed', () => {
    const buffered = fromOpenAiCompletion({
      id: 'c1', object: 'chat.completion', created: 1, model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi', reasoning_content: 'Because.' }, finish_reason: 'stop', logprobs: { content: [{ token: 'Hi', logprob: -0.5, bytes: [72, 105], top_logprobs: [] }] } }],
    });
    expect(buffered.choices[0]).toMatchObject({
      reasoning: [{ type: 'thinking', text: 'Because.', signature: null }],
      logprobs: [{ token: 'Hi', logprob: -0.5, bytes: [72, 105], topLogprobs: [] }],
    });
    const translator = new OpenAiStreamTranslator();
    const chunk = (delta: Record<string, unknown>, logprobs: unknown = null) =>
      translator.translate({ event: null, data: JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null, logprobs }] }), id: null });
    expect(chunk({ reasoning: 'Think' })).toEqual([{ type: 'reasoning', choice: 0, part: 0, text: 'Think' }]);
    expect(chunk({ content: 'A' }, { content: [{ token: 'A', logprob: -1, bytes: null, top_logprobs: [{ token: 'B', logprob: -2, bytes: null }] }] })).toEqual([
      { type: 'logprobs', choice: 0, content: [{ token: 'A', logprob: -1, bytes: null, topLogprobs: [{ token: 'B', logprob: -2, bytes: null }] }] },
      { type: 'text', choice: 0, text: 'A' },
    ]);
  });

  test('Gemini: thought parts are reasoning (never text); logprobsResult becomes per-token log probabilities', () => {
    const response = fromGeminiResponse({
      candidates: [{
        index: 0, finishReason: 'STOP',
        content: { role: 'model', parts: [{ text: 'Planning.', thought: true }, { text: 'Answer.' }] },
        logprobsResult: { chosenCandidates: [{ token: 'Answer', logProbability: -0.2 }], topCandidates: [{ candidates: [{ token: 'Answer', logProbability: -0.2 }, { token: 'Reply', logProbability: -1.9 }] }] },
      }],
    });
    expect(response.choices[0]).toMatchObject({
      text: 'Answer.',
      reasoning: [{ type: 'thinking', text: 'Planning.', signature: null }],
      logprobs: [{ token: 'Answer', logprob: -0.2, topLogprobs: [{ token: 'Answer', logprob: -0.2 }, { token: 'Reply', logprob: -1.9 }] }],
    });
  });

  test('a stream that was cut after message_start is billed with the provider\'s prompt count, not the estimate', () => {
    const meter = new OutputMeter();
    const { input, cachedInput, cacheWrite } = reported({ input: 200, cachedInput: 50, cacheWrite: 30, output: 0, reasoning: 0 });
    meter.observe({ type: 'prompt_usage', usage: { input, cachedInput, cacheWrite } });
    meter.observe({ type: 'reasoning', choice: 0, part: 0, text: 'abcdefgh' });
    expect(meter.sawOutput).toBe(true); // thinking that reached the client ends retries
    expect(meter.usage({ estimatedInputTokens: 999, bound: { input: 10_000, output: 10_000 } })).toEqual({
      usage: { input: 200, cachedInput: 50, cacheWrite: 30, output: 2, reasoning: 0 }, evidence: 'counted', implausible: null,
    });
  });
});

describe('reasoning in the client formats', () => {
  const usage = { input: 200, cachedInput: 50, cacheWrite: 30, output: 85, reasoning: 20 };

  test('Anthropic stream encoder: message_start has the provider\'s prompt count; thinking blocks with signature_delta; redacted blocks', () => {
    const encoder = new AnthropicMessagesStreamEncoder(identity, 999);
    const wire = encodeRelayed(encoder, anthropicEvents('stream-thinking.sse')) + encoder.finish(usage);
    const frames = sseFrames(wire);
    expect(frames[0].data.message.usage).toEqual({ input_tokens: 120, cache_creation_input_tokens: 30, cache_read_input_tokens: 50, output_tokens: 0 });
    const blocks = frames.filter((f) => f.event === 'content_block_start').map((f) => f.data.content_block);
    expect(blocks).toEqual([
      { type: 'thinking', thinking: '', signature: '' },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP' },
      { type: 'text', text: '' },
    ]);
    const deltas = frames.filter((f) => f.event === 'content_block_delta').map((f) => [f.data.index, f.data.delta.type]);
    expect(deltas).toEqual([[0, 'thinking_delta'], [0, 'thinking_delta'], [0, 'signature_delta'], [2, 'text_delta']]);
    // Every block that starts also stops, in order.
    expect(frames.filter((f) => f.event === 'content_block_stop').map((f) => f.data.index)).toEqual([0, 1, 2]);
    expect(frames.find((f) => f.event === 'message_delta')!.data.usage).toEqual({ input_tokens: 120, cache_creation_input_tokens: 30, cache_read_input_tokens: 50, output_tokens: 85 });
  });

  test('Anthropic stream encoder without a provider prompt count: message_start carries the admission estimate', () => {
    const encoder = new AnthropicMessagesStreamEncoder(identity, 42);
    const frames = sseFrames(encoder.encode({ type: 'text', choice: 0, text: 'Hi' }));
    expect(frames[0].data.message.usage.input_tokens).toBe(42);
  });

  test('OpenAI stream encoder: reasoning_content deltas, a signed block whole as thinking_blocks, and logprobs', () => {
    const encoder = new OpenAiChatStreamEncoder(identity, false);
    const reasoning = sseFrames(encoder.encode({ type: 'reasoning', choice: 0, part: 0, text: 'Hmm' }));
    expect(reasoning.map((f) => f.data.choices[0].delta)).toEqual([{ role: 'assistant', content: '' }, { reasoning_content: 'Hmm' }]);
    expect(sseFrames(encoder.encode({ type: 'reasoning_signature', choice: 0, part: 0, signature: 's' }))[0].data.choices[0].delta).toEqual({
      thinking_blocks: [{ type: 'thinking', thinking: 'Hmm', signature: 's' }],
    });
    const logprobs = sseFrames(encoder.encode({ type: 'logprobs', choice: 0, content: [{ token: 'A', logprob: -1, bytes: [65], topLogprobs: [] }] }));
    expect(logprobs[0].data.choices[0].logprobs).toEqual({ content: [{ token: 'A', logprob: -1, bytes: [65], top_logprobs: [] }], refusal: null });
  });

  test('buffered: Anthropic puts thinking first; OpenAI gives reasoning_content and, for signed thinking, thinking_blocks', () => {
    const response = {
      providerRequestId: null,
      choices: [{ index: 0, text: 'Hi', toolCalls: [], stopReason: 'stop' as const, reasoning: [{ type: 'thinking' as const, text: 'Hmm.', signature: 'sig' }], logprobs: null }],
      usage: null,
    };
    expect(toAnthropicMessage(response, identity, usage).content).toEqual([{ type: 'thinking', thinking: 'Hmm.', signature: 'sig' }, { type: 'text', text: 'Hi' }]);
    expect(toOpenAiCompletion(response, identity, usage).choices[0].message).toMatchObject({
      content: 'Hi', reasoning_content: 'Hmm.', thinking_blocks: [{ type: 'thinking', thinking: 'Hmm.', signature: 'sig' }],
    });
  });

  test('parsing earlier reasoning: Anthropic thinking blocks and OpenAI thinking_blocks become signed reasoning parts', () => {
    const anthropic = parseAnthropicMessagesRequest({
      model: 'c', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2000 },
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'Hmm.', signature: 'sig' }, { type: 'redacted_thinking', data: 'x' }, { type: 'tool_use', id: 't', name: 'f', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'r', cache_control: { type: 'ephemeral' } }] },
      ],
    });
    expect(anthropic.reasoning).toEqual({ effort: null, budgetTokens: 2000 });
    expect(anthropic.messages[1]).toMatchObject({ role: 'assistant', reasoning: [{ type: 'thinking', text: 'Hmm.', signature: 'sig' }, { type: 'redacted_thinking', data: 'x' }] });
    expect(anthropic.messages[2]).toMatchObject({ role: 'tool', cacheControl: { type: 'ephemeral', ttl: null } });
    const openai = parseOpenAiChatRequest({
      model: 'm', reasoning_effort: 'minimal',
      messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a', thinking_blocks: [{ type: 'thinking', thinking: 'Hmm.', signature: 'sig' }] }],
    });
    expect(openai.reasoning).toEqual({ effort: 'minimal', budgetTokens: null });
    expect(openai.messages[1]).toMatchObject({ reasoning: [{ type: 'thinking', text: 'Hmm.', signature: 'sig' }] });
  });
});
