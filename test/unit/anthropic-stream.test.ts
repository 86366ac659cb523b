import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RelayedStreamEvent, StreamEvent } from '../../modules/canonical/chat-response.js';
import type { TokenUsage } from '../../events/index.js';
import { believedUsage } from '../support/believed-usage.js';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { AnthropicStreamTranslator } from '../../modules/providers/anthropic/anthropic-stream.js';
import { SseDecoder } from '../../modules/providers/streaming/sse-decoder.js';
import { AnthropicMessagesStreamEncoder } from '../../modules/inference/formats/anthropic/anthropic-messages-stream.js';

const fixture = (name: string) => readFileSync(join(process.cwd(), 'test/fixtures/anthropic', name), 'utf8');

/** Feeds the bytes to decoder + translator in the given chunks; returns the canonical events. */
function translate(bytes: Uint8Array, cuts: number[]): { events: StreamEvent[]; translator: AnthropicStreamTranslator } {
  const decoder = new SseDecoder();
  const translator = new AnthropicStreamTranslator();
  const events: StreamEvent[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    for (const frame of decoder.push(bytes.subarray(start, cut))) events.push(...translator.translate(frame));
    start = cut;
  }
  for (const frame of decoder.end()) events.push(...translator.translate(frame));
  translator.end();
  return { events, translator };
}

/** Folds canonical events into what a client would see: text, calls (by index), finish, usage. */
function fold(events: StreamEvent[]) {
  let text = '';
  const calls: Array<{ id: string | null; name: string | null; arguments: string }> = [];
  let finish: string | null = null;
  let usage: TokenUsage | null = null;
  for (const event of events) {
    if (event.type === 'text') text += event.text;
    if (event.type === 'tool_call') {
      if (event.id !== null) calls[event.index] = { id: event.id, name: event.name, arguments: '' };
      calls[event.index].arguments += event.arguments;
    }
    if (event.type === 'finish') finish = event.stopReason;
    if (event.type === 'usage') usage = believedUsage(event.usage);
  }
  return { text, calls, finish, usage };
}

describe('Anthropic stream translator on the documentation transcripts', () => {
  test('the basic text stream: text, end_turn → stop, usage from message_start and message_delta', () => {
    const { events, translator } = translate(Buffer.from(fixture('stream-text.sse')), []);
    expect(fold(events)).toEqual({
      text: 'Hello!',
      calls: [],
      finish: 'stop',
      usage: { input: 25, cachedInput: 0, cacheWrite: 0, output: 15, reasoning: 0 },
    });
    expect(translator.providerRequestId).toBe('msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY');
    // Exactly one finish and one usage, both after all output.
    expect(events.slice(-2).map((e) => e.type)).toEqual(['finish', 'usage']);
  });

  test('the tool-use stream: text block, then a tool_use with id, name and its JSON assembled from pieces', () => {
    const { events } = translate(Buffer.from(fixture('stream-tool-use.sse')), []);
    const folded = fold(events);
    expect(folded.text).toBe("Okay, let's check the weather for San Francisco, CA:");
    expect(folded.calls).toHaveLength(1);
    expect(folded.calls[0]).toMatchObject({ id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather' });
    expect(JSON.parse(folded.calls[0].arguments)).toEqual({ location: 'San Francisco, CA', unit: 'fahrenheit' });
    expect(folded.finish).toBe('tool_calls');
    expect(folded.usage).toEqual({ input: 472, cachedInput: 0, cacheWrite: 0, output: 89, reasoning: 0 });
  });

  test.each(['stream-text.sse', 'stream-tool-use.sse'])('%s split at every byte boundary gives the same events', (name) => {
    const bytes = Buffer.from(fixture(name));
    const whole = translate(bytes, []).events;
    for (let cut = 1; cut < bytes.length; cut++) expect(translate(bytes, [cut]).events).toEqual(whole);
    const everyByte = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
    expect(translate(bytes, everyByte).events).toEqual(whole);
  });

  test('multi-byte UTF-8 text (2-, 3- and 4-byte characters) survives every split point', () => {
    const text = fixture('stream-text.sse').replace('"text": "Hello"', '"text": "Grüße, 世界 🚀"').replace('"text": "!"', '"text": " — 👍🏽"');
    const bytes = Buffer.from(text);
    expect(bytes.length).toBeGreaterThan(text.length); // really multi-byte
    for (let cut = 1; cut < bytes.length; cut++) expect(fold(translate(bytes, [cut]).events).text).toBe('Grüße, 世界 🚀 — 👍🏽');
    const everyByte = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
    expect(fold(translate(bytes, everyByte).events).text).toBe('Grüße, 世界 🚀 — 👍🏽');
  });

  test('CRLF line endings are read the same way', () => {
    const crlf = Buffer.from(fixture('stream-tool-use.sse').replace(/\n/g, '\r\n'));
    expect(translate(crlf, [crlf.indexOf('\r') + 1]).events).toEqual(translate(Buffer.from(fixture('stream-tool-use.sse')), []).events);
  });
});

describe('Anthropic stream translator: failures are never a clean stop', () => {
  const start = fixture('stream-text.sse').split('event: content_block_stop')[0];

  test('the documented in-stream error event (overloaded_error) after output is a ProviderError', () => {
    const bytes = Buffer.from(start + fixture('stream-error.sse'));
    let error: unknown;
    try {
      translate(bytes, []);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ errorClass: 'overloaded' });
    // The provider's words travel apart from our message, redacted; the message itself is ours.
    expect((error as ProviderError).providerMessage).toContain('Overloaded');
    expect((error as Error).message).not.toContain('Overloaded');
  });

  test.each([
    ['rate_limit_error', 'rate_limited'],
    ['api_error', 'transient'],
    ['invalid_request_error', 'invalid_request'],
    ['something_new', 'transient'],
  ])('an error event of type %s is classified %s', (type, errorClass) => {
    const translator = new AnthropicStreamTranslator();
    expect(() => translator.translate({ event: 'error', data: JSON.stringify({ type: 'error', error: { type, message: 'x' } }), id: null })).toThrow(
      expect.objectContaining({ errorClass }),
    );
  });

  test('a stream cut before message_stop is malformed even after message_delta', () => {
    const cut = fixture('stream-text.sse').split('event: message_stop')[0];
    expect(() => translate(Buffer.from(cut), [])).toThrow(expect.objectContaining({ errorClass: 'malformed_response' }));
  });

  test.each([
    ['a delta before message_start', 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}\n\n'],
    ['a delta for a block that never started', `${start.split('event: content_block_start')[0]}event: content_block_delta\ndata: {"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}\n\n`],
    ['a second message_start', `${start}${start.split('event: content_block_start')[0]}`],
    ['input_json_delta on a text block', `${start}event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}\n\n`],
    ['a frame that is not JSON', `${start}event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {\n\n`],
  ])('%s is a malformed response', (_name, sse) => {
    expect(() => translate(Buffer.from(sse), [])).toThrow(expect.objectContaining({ errorClass: 'malformed_response' }));
  });

  test('unknown event types, thinking blocks and pings are skipped; a tool without arguments gets {}', () => {
    const sse = [
      ['message_start', { type: 'message_start', message: { id: 'msg_x', usage: { input_tokens: 10, cache_read_input_tokens: 90, cache_creation_input_tokens: 5, output_tokens: 1 } } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['brand_new_event', { type: 'brand_new_event', whatever: true }],
      ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'now', input: {} } }],
      ['ping', { type: 'ping' }],
      ['content_block_stop', { type: 'content_block_stop', index: 1 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 7 } }],
      ['message_stop', { type: 'message_stop' }],
    ]
      .map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
      .join('');
    const { events } = translate(Buffer.from(sse), []);
    const folded = fold(events);
    expect(folded.text).toBe('');
    expect(folded.calls).toEqual([{ id: 'toolu_1', name: 'now', arguments: '{}' }]);
    expect(folded.finish).toBe('tool_calls');
    // Canonical input includes cache reads and writes: 10 + 90 + 5.
    expect(folded.usage).toEqual({ input: 105, cachedInput: 90, cacheWrite: 5, output: 7, reasoning: 0 });
  });
});

describe('Anthropic client stream encoder', () => {
  const identity = { id: 'msg_0123', created: 0, model: 'claude-alias' };
  const usage = { input: 120, cachedInput: 100, cacheWrite: 0, output: 9, reasoning: 0 };

  test('emits message_start, ping, blocks in order, then message_delta with the settled usage and message_stop', () => {
    const encoder = new AnthropicMessagesStreamEncoder(identity);
    const out =
      encoder.encode({ type: 'text', choice: 0, text: 'Checking' }) +
      encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: 'call_1', name: 'get_weather', arguments: '' }) +
      encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: null, name: null, arguments: '{"city":' }) +
      encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: null, name: null, arguments: '"Paris"}' }) +
      encoder.encode({ type: 'finish', choice: 0, stopReason: 'tool_calls' }) +
      encoder.finish(usage);
    const frames = out.split('\n\n').filter(Boolean).map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      return { event: eventLine.slice('event: '.length), data: JSON.parse(dataLine.slice('data: '.length)) };
    });
    // The tool call is held until it is complete (the finish) and written whole: one delta with the object.
    expect(frames.map((f) => f.event)).toEqual([
      'message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop',
    ]);
    for (const frame of frames) expect(frame.data.type).toBe(frame.event);
    expect(frames[0].data.message).toMatchObject({ id: 'msg_0123', model: 'claude-alias', role: 'assistant', content: [] });
    expect(frames[5].data).toEqual({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} } });
    expect(frames[6].data).toEqual({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":"Paris"}' } });
    expect(frames[8].data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 20, cache_read_input_tokens: 100, cache_creation_input_tokens: 0, output_tokens: 9 },
    });
  });

  test('the stop sequence that matched: message_delta says stop_sequence and names it, and the translator reads it back', () => {
    const encoder = new AnthropicMessagesStreamEncoder(identity);
    const wire = encoder.encode({ type: 'text', choice: 0, text: 'One, two, ' }) + encoder.encode({ type: 'finish', choice: 0, stopReason: 'stop', stopSequence: 'three' }) + encoder.finish(usage);
    expect(wire).toContain('"delta":{"stop_reason":"stop_sequence","stop_sequence":"three"}');
    const { events } = translate(new TextEncoder().encode(wire), []);
    expect(events.filter((e) => e.type === 'finish')).toEqual([{ type: 'finish', choice: 0, stopReason: 'stop', stopSequence: 'three' }]);
    // without one, end_turn and null, as before
    const plain = new AnthropicMessagesStreamEncoder(identity);
    const plainWire = plain.encode({ type: 'finish', choice: 0, stopReason: 'stop' }) + plain.finish(usage);
    expect(plainWire).toContain('"delta":{"stop_reason":"end_turn","stop_sequence":null}');
    expect(translate(new TextEncoder().encode(plainWire), []).events.filter((e) => e.type === 'finish')).toEqual([{ type: 'finish', choice: 0, stopReason: 'stop' }]);
  });

  test('round trip: what the encoder writes, the provider translator reads back to the same canonical events', () => {
    const source: RelayedStreamEvent[] = [
      { type: 'text', choice: 0, text: 'Ünïcødé ' },
      { type: 'text', choice: 0, text: '→ 🚀' },
      { type: 'tool_call', choice: 0, index: 0, id: 'toolu_a', name: 'a', arguments: '{"x":' },
      { type: 'tool_call', choice: 0, index: 0, id: null, name: null, arguments: '1}' },
      { type: 'tool_call', choice: 0, index: 1, id: 'toolu_b', name: 'b', arguments: '{}' },
      { type: 'finish', choice: 0, stopReason: 'tool_calls' },
    ];
    const encoder = new AnthropicMessagesStreamEncoder(identity);
    const wire = source.map((e) => encoder.encode(e)).join('') + encoder.finish(usage);
    const bytes = Buffer.from(wire);
    for (const cuts of [[], Array.from({ length: bytes.length - 1 }, (_, i) => i + 1)]) {
      const { events } = translate(bytes, cuts);
      expect(fold(events)).toEqual({
        text: 'Ünïcødé → 🚀',
        calls: [{ id: 'toolu_a', name: 'a', arguments: '{"x":1}' }, { id: 'toolu_b', name: 'b', arguments: '{}' }],
        finish: 'tool_calls',
        usage,
      });
    }
  });

  /** The frames of an encoded stream, as [event, data]. */
  const framesOf = (wire: string) => wire.split('\n\n').filter(Boolean).map((block) => {
    const [eventLine, dataLine] = block.split('\n');
    return { event: eventLine.slice('event: '.length), data: JSON.parse(dataLine.slice('data: '.length)) };
  });
  /** What a client assembles from the stream: each tool_use block's input, parsed from its deltas as the SDKs do. */
  const toolInputs = (wire: string) => {
    const inputs = new Map<number, { name: string; json: string }>();
    for (const { event, data } of framesOf(wire)) {
      if (event === 'content_block_start' && data.content_block.type === 'tool_use') inputs.set(data.index, { name: data.content_block.name, json: '' });
      if (event === 'content_block_delta' && data.delta.type === 'input_json_delta') inputs.get(data.index)!.json += data.delta.partial_json;
    }
    return [...inputs.values()].map(({ name, json }) => ({ name, input: json === '' ? {} : JSON.parse(json) }));
  };

  test.each([
    ['cut-off JSON', ['{"city": ', '"Par']],
    ['text that is not JSON', ['Paris, ', 'tomorrow']],
    ['a JSON array', ['[1,', '2]']],
  ])('tool arguments that are not a JSON object (%s) arrive as {"_raw": …}: the concatenated deltas always parse to an object', (_name, pieces) => {
    const encoder = new AnthropicMessagesStreamEncoder(identity);
    let wire = encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: 'call_1', name: 'get_weather', arguments: '' });
    for (const piece of pieces) wire += encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: null, name: null, arguments: piece });
    wire += encoder.encode({ type: 'finish', choice: 0, stopReason: 'tool_calls' }) + encoder.finish(usage);
    expect(toolInputs(wire)).toEqual([{ name: 'get_weather', input: { _raw: pieces.join('') } }]);
    const { events } = translate(Buffer.from(wire), []);
    expect(fold(events).calls).toEqual([{ id: 'call_1', name: 'get_weather', arguments: JSON.stringify({ _raw: pieces.join('') }) }]);
  });

  test('interleaved pieces of two parallel calls (as OpenAI may send them) become two whole blocks, in order, never a delta for a stopped block', () => {
    const encoder = new AnthropicMessagesStreamEncoder(identity);
    const call = (index: number, id: string | null, name: string | null, args: string) => encoder.encode({ type: 'tool_call', choice: 0, index, id, name, arguments: args });
    const wire = call(0, 'call_a', 'weather', '') + call(1, 'call_b', 'time', '') + call(0, null, null, '{"city":') + call(1, null, null, '{"tz":') +
      call(0, null, null, '"Paris"}') + call(1, null, null, '"CET"}') + encoder.encode({ type: 'finish', choice: 0, stopReason: 'tool_calls' }) + encoder.finish(usage);
    const frames = framesOf(wire);
    expect(frames.map((f) => f.event)).toEqual([
      'message_start', 'ping',
      'content_block_start', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_stop',
      'message_delta', 'message_stop',
    ]);
    // Every delta belongs to the block open at that moment.
    let open: number | null = null;
    for (const { event, data } of frames) {
      if (event === 'content_block_start') open = data.index;
      if (event === 'content_block_delta') expect(data.index).toBe(open);
      if (event === 'content_block_stop') open = null;
    }
    expect(toolInputs(wire)).toEqual([{ name: 'weather', input: { city: 'Paris' } }, { name: 'time', input: { tz: 'CET' } }]);
  });

  test('text after a call writes the held call first; text and thinking are never held; an empty text piece does not end the held calls', () => {
    const encoder = new AnthropicMessagesStreamEncoder(identity);
    const start = encoder.encode({ type: 'text', choice: 0, text: 'Let me check.' });
    expect(framesOf(start).map((f) => f.event)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta']);
    expect(encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: 'call_1', name: 'f', arguments: '{"a":' })).toBe('');
    expect(encoder.encode({ type: 'text', choice: 0, text: '' })).toBe('');
    expect(encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: null, name: null, arguments: '1}' })).toBe('');
    const after = framesOf(encoder.encode({ type: 'text', choice: 0, text: 'Done.' }));
    expect(after.map((f) => f.event)).toEqual([
      'content_block_stop', 'content_block_start', 'content_block_delta', 'content_block_stop', 'content_block_start', 'content_block_delta',
    ]);
    expect(after[2].data.delta).toEqual({ type: 'input_json_delta', partial_json: '{"a":1}' });
    // More of a call already written is a malformed answer, not a second block with the same id.
    expect(() => encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: null, name: null, arguments: '"x"' })).toThrow(ProviderError);
  });

  test('from a provider whose arguments assemble to an object (Anthropic, Bedrock, Gemini) the pieces go out as they come, each in its call\'s block', () => {
    const encoder = new AnthropicMessagesStreamEncoder(identity);
    encoder.upstreamToolArguments('object');
    const first = encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: 'toolu_1', name: 'weather', arguments: '' }) +
      encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: null, name: null, arguments: '{"city":' });
    expect(framesOf(first).map((f) => f.event)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta']);
    const second = encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: null, name: null, arguments: '"Paris"}' }) +
      encoder.encode({ type: 'tool_call', choice: 0, index: 1, id: 'toolu_2', name: 'time', arguments: '{}' }) +
      encoder.encode({ type: 'finish', choice: 0, stopReason: 'tool_calls' }) + encoder.finish(usage);
    expect(framesOf(second).map((f) => f.event)).toEqual([
      'content_block_delta', 'content_block_stop', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop',
    ]);
    expect(toolInputs(first + second)).toEqual([{ name: 'weather', input: { city: 'Paris' } }, { name: 'time', input: {} }]);
    // Such a provider sends one call after another: a piece of an earlier call is its fault.
    expect(() => encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: null, name: null, arguments: 'x' })).toThrow(ProviderError);
  });

  test('held arguments are bounded: a provider that streams more than the bound is cut off as a malformed answer', () => {
    const encoder = new AnthropicMessagesStreamEncoder(identity);
    encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: 'call_1', name: 'f', arguments: '{"a":"' });
    const piece = 'x'.repeat(1024 * 1024);
    let thrown: unknown = null;
    try {
      for (let i = 0; i < 9; i++) encoder.encode({ type: 'tool_call', choice: 0, index: 0, id: null, name: null, arguments: piece });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProviderError);
    expect((thrown as ProviderError).errorClass).toBe('malformed_response');
  });

  test('finish without any output still writes a complete, well-formed message', () => {
    const encoder = new AnthropicMessagesStreamEncoder(identity);
    const wire = encoder.encode({ type: 'finish', choice: 0, stopReason: 'length' }) + encoder.finish(usage);
    const { events } = translate(Buffer.from(wire), []);
    expect(fold(events)).toMatchObject({ text: '', finish: 'length' });
  });

  test('an error after output is an `event: error` frame in the Anthropic envelope', () => {
    const encoder = new AnthropicMessagesStreamEncoder(identity);
    const frame = encoder.error(new GatewayError(502, 'upstream_error', 'The provider failed after the stream started.'));
    expect(frame).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"The provider failed after the stream started."}}\n\n',
    );
  });
});

describe('Anthropic client format', () => {
  test('one encoder writes a whole response: the closing frames know the stop reason and the open block', async () => {
    const { anthropicClientFormat } = await import('../../modules/inference/formats/anthropic/anthropic-client-format.js');
    const request = anthropicClientFormat.parseChat({ model: 'claude', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'x' }] });
    const identity = { id: anthropicClientFormat.responseId('0190c0de-0000-7000-8000-000000000001'), created: 0, model: 'claude' };
    expect(identity.id).toBe('msg_0190c0de000070008000000000000001');
    const relay = anthropicClientFormat.streamEncoder(identity, request);
    const wire = relay.encode({ type: 'text', choice: 0, text: 'hi' }) + relay.encode({ type: 'finish', choice: 0, stopReason: 'length' });
    const closing = relay.finish({ input: 3, cachedInput: 0, cacheWrite: 0, output: 1, reasoning: 0 });
    expect(closing).not.toContain('message_start');
    const { events } = translate(Buffer.from(wire + closing), []);
    expect(fold(events)).toEqual({ text: 'hi', calls: [], finish: 'length', usage: { input: 3, cachedInput: 0, cacheWrite: 0, output: 1, reasoning: 0 } });
  });
});
