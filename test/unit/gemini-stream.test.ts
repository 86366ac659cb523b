import type { StreamEvent } from '../../modules/canonical/chat-response.js';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { GeminiStreamTranslator } from '../../modules/providers/gemini/gemini-stream.js';
import { SseDecoder } from '../../modules/providers/streaming/sse-decoder.js';
import { fixtureBytes, fold } from '../support/provider-fixtures.js';
import { withBelievedUsage } from '../support/believed-usage.js';

/** Decoder + translator over a whole body, as the adapter runs them (end() once the body is over). */
function run(body: Uint8Array | string): { events: StreamEvent[]; translator: GeminiStreamTranslator } {
  const decoder = new SseDecoder();
  const translator = new GeminiStreamTranslator();
  const events: StreamEvent[] = [];
  for (const frame of decoder.push(typeof body === 'string' ? Buffer.from(body) : body)) events.push(...translator.translate(frame));
  for (const frame of decoder.end()) events.push(...translator.translate(frame));
  events.push(...translator.end());
  return { events, translator };
}

const data = (payload: unknown) => `data: ${JSON.stringify(payload)}\r\n\r\n`;
const textChunk = (text: string, finishReason?: string) => ({ candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...(finishReason ? { finishReason } : {}) }] });

describe('Gemini stream translator', () => {
  test('text stream: thought parts become reasoning, one finish, usage (visible + thoughts) reported once at the end', () => {
    const { events, translator } = run(fixtureBytes('gemini', 'stream-text.sse'));
    expect(withBelievedUsage(events)).toEqual([
      { type: 'reasoning', choice: 0, part: 0, text: '**Planning** the answer about foxes.' },
      { type: 'text', choice: 0, text: 'The quick brown fox' },
      { type: 'text', choice: 0, text: ' jumps over the lazy dog — très vite, 狐 🦊.' },
      { type: 'text', choice: 0, text: ' Done.' },
      { type: 'finish', choice: 0, stopReason: 'stop' },
      { type: 'usage', usage: { input: 10, cachedInput: 0, cacheWrite: 0, output: 66, reasoning: 42 } },
    ]);
    expect(translator.providerRequestId).toBe('sTrEaMrEsP05');
  });

  test('function calls arrive whole: one tool_call event each, with id, name and complete arguments', () => {
    const { events } = run(fixtureBytes('gemini', 'stream-function-call.sse'));
    expect(withBelievedUsage(events)).toEqual([
      { type: 'text', choice: 0, text: 'Checking the weather' },
      { type: 'tool_call', choice: 0, index: 0, id: 'call_0', name: 'get_current_weather', arguments: '{"location":"Zürich","unit":"celsius"}' },
      { type: 'tool_call', choice: 0, index: 1, id: 'call_1', name: 'get_local_time', arguments: '{"timezone":"Europe/Zurich"}' },
      { type: 'finish', choice: 0, stopReason: 'tool_calls' },
      { type: 'usage', usage: { input: 71, cachedInput: 0, cacheWrite: 0, output: 31, reasoning: 0 } },
    ]);
  });

  test('MAX_TOKENS → length', () => {
    expect(fold(run(fixtureBytes('gemini', 'stream-max-tokens.sse')).events)).toMatchObject({ text: 'Here is a long answer that stops', finish: 'length' });
  });

  test('an error object inside the 200 stream is a typed failure after the output already translated', () => {
    const decoder = new SseDecoder();
    const translator = new GeminiStreamTranslator();
    const frames = decoder.push(fixtureBytes('gemini', 'stream-error.sse'));
    expect(translator.translate(frames[0])).toEqual([{ type: 'text', choice: 0, text: 'Partial answer' }]);
    expect(() => translator.translate(frames[1])).toThrow(expect.objectContaining({ errorClass: 'overloaded', providerMessage: expect.stringMatching(/overloaded/) }));
  });

  test('a stream that ends before its finish reports no usage, so it is billed on what was relayed', () => {
    const { events } = run(data({ ...textChunk('Half an'), usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 2 } }));
    expect(withBelievedUsage(events)).toEqual([{ type: 'text', choice: 0, text: 'Half an' }]);
  });

  test('output after a candidate finished breaks the stream (it would corrupt the client stream)', () => {
    expect(() => run(data(textChunk('one', 'STOP')) + data(textChunk('two')))).toThrow(expect.objectContaining({ errorClass: 'malformed_response' }));
    // An empty trailing part after the finish is harmless.
    expect(fold(run(data(textChunk('one', 'STOP')) + data(textChunk(''))).events)).toMatchObject({ text: 'one', finish: 'stop' });
  });

  test('two candidates stream side by side, each with its own finish and call numbering', () => {
    const chunk = {
      candidates: [
        { content: { role: 'model', parts: [{ functionCall: { name: 'a', args: {} } }] }, index: 0, finishReason: 'STOP' },
        { content: { role: 'model', parts: [{ text: 'B' }] }, index: 1 },
      ],
    };
    const { events } = run(data(chunk) + data({ candidates: [{ content: { role: 'model', parts: [{ text: '!' }] }, index: 1, finishReason: 'STOP' }] }));
    expect(withBelievedUsage(events)).toEqual([
      { type: 'tool_call', choice: 0, index: 0, id: 'call_0', name: 'a', arguments: '{}' },
      { type: 'finish', choice: 0, stopReason: 'tool_calls' },
      { type: 'text', choice: 1, text: 'B' },
      { type: 'text', choice: 1, text: '!' },
      { type: 'finish', choice: 1, stopReason: 'stop' },
    ]);
  });

  test('a blocked prompt in the first frame is content_policy', () => {
    expect(() => run(data({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 4 } }))).toThrow(
      expect.objectContaining({ errorClass: 'content_policy' }),
    );
  });

  test.each([['not json'], ['[1,2]'], ['null'], ['"text"']])('frame %s is a malformed response', (payload) => {
    let error: unknown;
    try {
      run(`data: ${payload}\r\n\r\n`);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).errorClass).toBe('malformed_response');
  });
});
