import type { StreamEvent } from '../../modules/canonical/chat-response.js';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { type EventStreamFrame, decodeEventStream, encodeEventFrame, encodeExceptionFrame } from '../../modules/providers/bedrock/bedrock-event-stream.js';
import { ConverseStreamTranslator } from '../../modules/providers/bedrock/bedrock-stream.js';
import { fixtureBytes, fixtureJson } from '../support/provider-fixtures.js';
import { withBelievedUsage } from '../support/believed-usage.js';

const toolUse = fixtureJson('bedrock', 'converse-stream-tool-use.events.json');
const throttled = fixtureJson('bedrock', 'converse-stream-throttled.events.json');

async function* chunks(parts: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield part;
}

async function decodeAll(parts: Uint8Array[]): Promise<EventStreamFrame[]> {
  const frames: EventStreamFrame[] = [];
  for await (const frame of decodeEventStream(chunks(parts))) frames.push(frame);
  return frames;
}

function translateAll(frames: EventStreamFrame[]): StreamEvent[] {
  const translator = new ConverseStreamTranslator();
  return frames.flatMap((frame) => translator.translate(frame));
}

async function rejection(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ProviderError) return error;
    throw error;
  }
  throw new Error('expected a ProviderError');
}

const frame = (eventType: string, payload: unknown): EventStreamFrame => ({
  messageType: 'event', eventType, exceptionType: null, errorCode: null, errorMessage: null, body: JSON.stringify(payload),
});

describe('ConverseStream binary decoding (golden fixture)', () => {
  const bytes = fixtureBytes('bedrock', 'converse-stream-tool-use.bin');

  test('the fixture decodes to the documented frames, in order, with their headers', async () => {
    const frames = await decodeAll([bytes]);
    expect(frames.map((f) => f.eventType)).toEqual(toolUse.frames.map((f: { eventType: string }) => f.eventType));
    expect(frames.every((f) => f.messageType === 'event')).toBe(true);
    expect(frames.map((f) => JSON.parse(f.body))).toEqual(toolUse.frames.map((f: { payload: unknown }) => f.payload));
  });

  test('split at every byte boundary, the frames and the canonical events are the same', async () => {
    for (let cut = 0; cut <= bytes.length; cut++) {
      const frames = await decodeAll([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect(withBelievedUsage(translateAll(frames))).toEqual(toolUse.expectedEvents);
    }
  });

  test('one byte at a time, the canonical events are the same', async () => {
    const parts = Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
    expect(withBelievedUsage(translateAll(await decodeAll(parts)))).toEqual(toolUse.expectedEvents);
  });

  test('a frame whose CRC does not match, or a stream cut inside a frame, is a malformed response', async () => {
    const corrupt = Buffer.from(bytes);
    corrupt[40] ^= 0x01; // inside the first frame's headers: the message CRC no longer matches
    expect((await rejection(decodeAll([corrupt]))).errorClass).toBe('malformed_response');
    expect((await rejection(decodeAll([bytes.subarray(0, bytes.length - 3)]))).errorClass).toBe('malformed_response');
  });

  test('a stream beyond the byte cap fails instead of buffering what a prelude declares', async () => {
    const huge = Buffer.alloc(16);
    huge.writeUInt32BE(0xfffffff0, 0); // a prelude claiming a 4 GiB message
    const parts = [huge, ...Array.from({ length: 8 }, () => Buffer.alloc(1024))];
    const frames: EventStreamFrame[] = [];
    const error = await rejection((async () => {
      for await (const f of decodeEventStream(chunks(parts), 4096)) frames.push(f);
    })());
    expect(error.errorClass).toBe('malformed_response');
    expect(error.message).toContain('4096 bytes');
    expect(frames).toHaveLength(0);
  });

  test('errors from the source (transport) pass through unchanged', async () => {
    const failing = async function* (): AsyncGenerator<Uint8Array> {
      yield bytes.subarray(0, 10);
      throw new ProviderError('connection', 'the connection to the provider failed');
    };
    const frames: EventStreamFrame[] = [];
    const error = await rejection((async () => {
      for await (const f of decodeEventStream(failing())) frames.push(f);
    })());
    expect(error.errorClass).toBe('connection');
  });
});

describe('ConverseStream translation (state machine)', () => {
  test('an exception frame inside the 200 stream (fixture) ends it with a typed error after the text already relayed', async () => {
    const bytes = fixtureBytes('bedrock', 'converse-stream-throttled.bin');
    for (let cut = 0; cut <= bytes.length; cut += 7) {
      const frames = await decodeAll([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect(frames[2]).toMatchObject({ messageType: 'exception', exceptionType: throttled.frames[2].exceptionType });
      const translator = new ConverseStreamTranslator();
      expect(translator.translate(frames[0])).toEqual([]);
      expect(translator.translate(frames[1])).toEqual([{ type: 'text', choice: 0, text: 'The most popular' }]);
      let caught: unknown;
      try {
        translator.translate(frames[2]);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ProviderError);
      expect((caught as ProviderError).errorClass).toBe('rate_limited');
      expect((caught as ProviderError).providerMessage).toContain('throttlingException');
      expect(translator.done).toBe(false);
    }
  });

  test.each([
    ['modelStreamErrorException', 'transient'],
    ['internalServerException', 'transient'],
    ['serviceUnavailableException', 'overloaded'],
    ['validationException', 'invalid_request'],
    ['throttlingException', 'rate_limited'],
  ])('exception %s → %s, never a clean stop', async (type, errorClass) => {
    const bytes = Buffer.concat([encodeEventFrame('messageStart', { role: 'assistant' }), encodeExceptionFrame(type, 'mock failure')]);
    const translator = new ConverseStreamTranslator();
    const frames = await decodeAll([bytes]);
    translator.translate(frames[0]);
    expect(() => translator.translate(frames[1])).toThrow(expect.objectContaining({ errorClass }));
  });

  test('an unmodelled `error` message is a transient failure', () => {
    const translator = new ConverseStreamTranslator();
    expect(() =>
      translator.translate({ messageType: 'error', eventType: null, exceptionType: null, errorCode: 'InternalFailure', errorMessage: 'boom', body: '' }),
    ).toThrow(expect.objectContaining({ errorClass: 'transient', providerMessage: expect.stringContaining('InternalFailure: boom') }));
  });

  test('two tool-use blocks after text get tool-call indexes 0 and 1, whatever their content block numbers', () => {
    const events = translateAll([
      frame('messageStart', { role: 'assistant' }),
      frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Both:' } }),
      frame('contentBlockStop', { contentBlockIndex: 0 }),
      frame('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'a', name: 'f' } } }),
      frame('contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'b', name: 'g' } } }),
      frame('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"y":2}' } } }),
      frame('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"x":1}' } } }),
      frame('messageStop', { stopReason: 'tool_use' }),
      frame('metadata', { usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } }),
    ]);
    expect(withBelievedUsage(events)).toEqual([
      { type: 'text', choice: 0, text: 'Both:' },
      { type: 'tool_call', choice: 0, index: 0, id: 'a', name: 'f', arguments: '' },
      { type: 'tool_call', choice: 0, index: 1, id: 'b', name: 'g', arguments: '' },
      { type: 'tool_call', choice: 0, index: 1, id: null, name: null, arguments: '{"y":2}' },
      { type: 'tool_call', choice: 0, index: 0, id: null, name: null, arguments: '{"x":1}' },
      { type: 'finish', choice: 0, stopReason: 'tool_calls' },
      { type: 'usage', usage: { input: 10, cachedInput: 0, cacheWrite: 0, output: 5, reasoning: 0 } },
    ]);
  });

  test('Claude thinking on Bedrock: reasoningContent text pieces, then the signature; redacted content as opaque data', () => {
    const events = translateAll([
      frame('messageStart', { role: 'assistant' }),
      frame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Let me ' } } }),
      frame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'think.' } } }),
      frame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig-abc' } } }),
      frame('contentBlockStop', { contentBlockIndex: 0 }),
      frame('contentBlockDelta', { contentBlockIndex: 1, delta: { reasoningContent: { redactedContent: 'b3BhcXVl' } } }),
      frame('contentBlockDelta', { contentBlockIndex: 2, delta: { text: 'Answer.' } }),
      frame('messageStop', { stopReason: 'end_turn' }),
      frame('metadata', { usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } }),
    ]);
    expect(events.slice(0, 5)).toEqual([
      { type: 'reasoning', choice: 0, part: 0, text: 'Let me ' },
      { type: 'reasoning', choice: 0, part: 0, text: 'think.' },
      { type: 'reasoning_signature', choice: 0, part: 0, signature: 'sig-abc' },
      { type: 'reasoning_redacted', choice: 0, part: 1, data: 'b3BhcXVl' },
      { type: 'text', choice: 0, text: 'Answer.' },
    ]);
  });

  test.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['guardrail_intervened', 'content_filter'],
    ['content_filtered', 'content_filter'],
  ])('stop reason %s → %s', (stopReason, expected) => {
    const events = translateAll([frame('messageStart', { role: 'assistant' }), frame('messageStop', { stopReason })]);
    expect(withBelievedUsage(events)).toEqual([{ type: 'finish', choice: 0, stopReason: expected }]);
  });

  test('events out of order, a toolUse delta for an unknown block, or a payload that is not JSON are malformed', () => {
    const cases: EventStreamFrame[][] = [
      [frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'early' } })],
      [frame('messageStart', { role: 'assistant' }), frame('messageStart', { role: 'assistant' })],
      [frame('messageStart', { role: 'assistant' }), frame('contentBlockDelta', { contentBlockIndex: 3, delta: { toolUse: { input: '{}' } } })],
      [frame('messageStart', { role: 'assistant' }), frame('messageStop', { stopReason: 'end_turn' }), frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'late' } })],
      [frame('messageStart', { role: 'assistant' }), { ...frame('contentBlockDelta', {}), body: 'not json' }],
    ];
    for (const frames of cases) {
      expect(() => translateAll(frames)).toThrow(expect.objectContaining({ errorClass: 'malformed_response' }));
    }
  });

  test('metadata marks the stream done; event types it does not know are skipped', () => {
    const translator = new ConverseStreamTranslator();
    translator.translate(frame('messageStart', { role: 'assistant' }));
    expect(translator.translate(frame('someFutureEvent', { x: 1 }))).toEqual([]);
    translator.translate(frame('messageStop', { stopReason: 'end_turn' }));
    expect(translator.done).toBe(false);
    expect(translator.translate(frame('metadata', { metrics: { latencyMs: 5 } }))).toEqual([]);
    expect(translator.done).toBe(true);
  });
});
