import type { ChatMessage, ChatRequest } from '../../modules/canonical/chat-request.js';
import type { ChatResponse, StreamEvent } from '../../modules/canonical/chat-response.js';
import { clientToolCallId, splitClientToolCallId } from '../../modules/canonical/thought-signature.js';
import { anthropicTokenCount } from '../../modules/inference/formats/anthropic/anthropic-count-tokens-request.js';
import { responsesInputTokens } from '../../modules/inference/formats/responses/responses-input-tokens.js';
import { anthropicClientFormat } from '../../modules/inference/formats/anthropic/anthropic-client-format.js';
import type { ClientFormat } from '../../modules/inference/formats/client-format.js';
import { openAiClientFormat } from '../../modules/inference/formats/openai/openai-client-format.js';
import { responsesClientFormat } from '../../modules/inference/formats/responses/responses-client-format.js';
import { AnswerCapture } from '../../modules/inference/pipeline/answer-capture.js';
import { toAnthropicRequest } from '../../modules/providers/anthropic/anthropic-request.js';
import { toConverseRequest } from '../../modules/providers/bedrock/bedrock-request.js';
import { toGeminiRequest } from '../../modules/providers/gemini/gemini-request.js';
import { fromGeminiResponse } from '../../modules/providers/gemini/gemini-response.js';
import { GeminiStreamTranslator } from '../../modules/providers/gemini/gemini-stream.js';
import { toOpenAiRequest } from '../../modules/providers/openai/openai-request.js';
import { ZERO_USAGE } from '../../modules/canonical/chat-response.js';
import { chatRequest } from '../support/provider-fixtures.js';

/** A Gemini-style signature: standard base64, with the characters an id usually lacks. */
const SIG = 'CiQB0e2Kb+3/xYz9=';
const ENCODED = `call_0__thought__${SIG}`;
const identity = { id: 'resp_abc', created: 1700000000, model: 'alias' };
const text = (value: string) => ({ type: 'text' as const, text: value });

const signedAnswer: ChatResponse = {
  providerRequestId: null,
  choices: [{ index: 0, text: '', toolCalls: [{ id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}', signature: SIG }], stopReason: 'tool_calls', reasoning: [], logprobs: null }],
  usage: null,
};
const signedHistory: ChatMessage[] = [
  { role: 'user', content: [text('Weather in Paris?')] },
  { role: 'assistant', content: [], toolCalls: [{ id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}', signature: SIG }] },
  { role: 'tool', toolCallId: 'call_0', content: [text('18°C')] },
];

describe('Gemini thought signatures: the tool-call id encoding', () => {
  test('a signature is appended to the id and split off again, byte for byte', () => {
    expect(clientToolCallId('call_0', SIG)).toBe(ENCODED);
    expect(splitClientToolCallId(ENCODED)).toEqual({ id: 'call_0', signature: SIG });
    expect(clientToolCallId('call_0', undefined)).toBe('call_0');
    expect(splitClientToolCallId('call_0')).toEqual({ id: 'call_0', signature: null });
  });

  test('ids that only look like the encoding stay ordinary ids', () => {
    expect(splitClientToolCallId('__thought__abc')).toEqual({ id: '__thought__abc', signature: null });
    expect(splitClientToolCallId('call_0__thought__')).toEqual({ id: 'call_0__thought__', signature: null });
  });
});

describe('Gemini thought signatures: adapter translation', () => {
  test('buffered: a functionCall part’s thoughtSignature becomes the call’s signature; an unsigned call has none', () => {
    const body = {
      candidates: [{
        content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIG }, { functionCall: { name: 'get_time', args: {} } }] },
        finishReason: 'STOP',
      }],
    };
    expect(fromGeminiResponse(body).choices[0].toolCalls).toEqual([
      { id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}', signature: SIG },
      { id: 'call_1', name: 'get_time', arguments: '{}' },
    ]);
  });

  test('stream: the tool_call event that opens a signed call carries the signature', () => {
    const translator = new GeminiStreamTranslator();
    const frame = { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIG }] }, finishReason: 'STOP', index: 0 }] };
    expect(translator.translate({ event: null, data: JSON.stringify(frame), id: null })).toEqual([
      { type: 'tool_call', choice: 0, index: 0, id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}', signature: SIG },
      { type: 'finish', choice: 0, stopReason: 'tool_calls' },
    ]);
  });

  test('request: the signature goes back on the matching functionCall part; unsigned calls go without one', () => {
    const messages: ChatMessage[] = [
      ...signedHistory.slice(0, 1),
      { role: 'assistant', content: [], toolCalls: [{ id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}', signature: SIG }, { id: 'call_1', name: 'get_time', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'call_0', content: [text('18°C')] },
      { role: 'tool', toolCallId: 'call_1', content: [text('12:00')] },
    ];
    expect(toGeminiRequest(chatRequest({ messages })).contents[1]).toEqual({
      role: 'model',
      parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIG }, { functionCall: { name: 'get_time', args: {} } }],
    });
  });

  test('other provider formats never receive the signature (it is Gemini state, not a parameter)', () => {
    const request = chatRequest({ messages: signedHistory });
    const bodies = [
      toOpenAiRequest(request, { model: 'gpt', maxTokensField: 'max_completion_tokens', stream: false }),
      toAnthropicRequest(request, { model: 'claude', defaultMaxTokens: 1024, stream: false }),
      toConverseRequest(request),
    ].map((body) => JSON.stringify(body));
    for (const body of bodies) {
      expect(body).not.toContain(SIG);
      expect(body).not.toContain('__thought__');
      expect(body).toContain('call_0');
    }
  });
});

describe('Gemini thought signatures through every client format', () => {
  const toolRequest = (format: ClientFormat, body: unknown): ChatRequest => format.parseChat(body);

  test('OpenAI format: the encoded id in tool_calls (buffered and streamed) and back from tool_calls/tool_call_id', () => {
    const request = chatRequest();
    const completion = openAiClientFormat.encodeChat(signedAnswer, identity, ZERO_USAGE, request) as { choices: Array<{ message: { tool_calls: Array<{ id: string }> } }> };
    expect(completion.choices[0].message.tool_calls[0].id).toBe(ENCODED);

    const encoder = openAiClientFormat.streamEncoder(identity, request);
    const event: StreamEvent = { type: 'tool_call', choice: 0, index: 0, id: 'call_0', name: 'get_weather', arguments: '{}', signature: SIG };
    expect(encoder.encode(event)).toContain(`"id":"${ENCODED}"`);

    const parsed = toolRequest(openAiClientFormat, {
      model: 'alias',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: ENCODED, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: ENCODED, content: '18°C' },
      ],
    });
    expect(parsed.messages.slice(1)).toEqual([signedHistory[1], signedHistory[2]]);
  });

  test('Anthropic format: the encoded id on tool_use blocks (buffered and streamed) and back from tool_use/tool_result', () => {
    const request = chatRequest();
    const message = anthropicClientFormat.encodeChat(signedAnswer, { ...identity, id: 'msg_abc' }, ZERO_USAGE, request) as { content: Array<{ type: string; id?: string }> };
    expect(message.content.find((b) => b.type === 'tool_use')?.id).toBe(ENCODED);

    const encoder = anthropicClientFormat.streamEncoder({ ...identity, id: 'msg_abc' }, request, 1);
    // The call is held until it is complete (here: the finish) and then written whole.
    const wire = encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: 'call_0', name: 'get_weather', arguments: '{}', signature: SIG }) +
      encoder.encode({ type: 'finish', choice: 0, stopReason: 'tool_calls' });
    expect(wire).toContain(`"id":"${ENCODED}"`);

    const parsed = toolRequest(anthropicClientFormat, {
      model: 'alias', max_tokens: 100,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: ENCODED, name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: ENCODED, content: '18°C' }] },
      ],
    });
    const assistant = parsed.messages.find((m) => m.role === 'assistant');
    const tool = parsed.messages.find((m) => m.role === 'tool');
    expect(assistant).toMatchObject({ toolCalls: [{ id: 'call_0', signature: SIG }] });
    expect(tool).toMatchObject({ toolCallId: 'call_0' });
  });

  test('Responses format: the encoded call_id on function_call items (buffered and streamed) and back from the input items', () => {
    const request = responsesClientFormat.parseChat({ model: 'alias', input: 'Weather in Paris?' });
    const object = responsesClientFormat.encodeChat(signedAnswer, identity, ZERO_USAGE, request) as { output: Array<{ type: string; call_id?: string }> };
    expect(object.output.find((item) => item.type === 'function_call')?.call_id).toBe(ENCODED);

    const encoder = responsesClientFormat.streamEncoder(identity, request);
    const wire = encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: 'call_0', name: 'get_weather', arguments: '{}', signature: SIG });
    expect(wire).toContain(`"call_id":"${ENCODED}"`);

    const parsed = toolRequest(responsesClientFormat, {
      model: 'alias',
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: ENCODED, name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: ENCODED, output: '18°C' },
      ],
    });
    expect(parsed.messages.find((m) => m.role === 'assistant')).toMatchObject({ toolCalls: [{ id: 'call_0', signature: SIG }] });
    expect(parsed.messages.find((m) => m.role === 'tool')).toMatchObject({ toolCallId: 'call_0' });
  });

  test('token counting parses signed ids as chat does, so a provider count (Anthropic) never sees the signature', () => {
    const counted = anthropicTokenCount.parse({
      model: 'alias',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: ENCODED, name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: ENCODED, content: '18°C' }] },
      ],
    });
    expect(JSON.stringify(toAnthropicRequest(counted, { model: 'claude', defaultMaxTokens: 1, stream: false }))).not.toContain('__thought__');
    const responses = responsesInputTokens.parse({ model: 'alias', input: [{ type: 'function_call', call_id: ENCODED, name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: ENCODED, output: 'x' }] });
    expect(responses.messages.find((m) => m.role === 'tool')).toMatchObject({ toolCallId: 'call_0' });
  });

  test('a stored (captured) streamed answer keeps the signature, so a replay or cache hit still carries it', () => {
    const capture = new AnswerCapture(openAiClientFormat.streamEncoder(identity, chatRequest()), 100_000);
    capture.encode({ type: 'tool_call', choice: 0, index: 0, id: 'call_0', name: 'get_weather', arguments: '{"city":', signature: SIG });
    capture.encode({ type: 'tool_call', choice: 0, index: 0, id: null, name: null, arguments: '"Paris"}' });
    capture.encode({ type: 'finish', choice: 0, stopReason: 'tool_calls' });
    expect(capture.response(null)!.choices[0].toolCalls).toEqual([{ id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}', signature: SIG }]);
  });
});
