import { SseDecoder, type SseEvent, SseOverflowError } from '../../modules/providers/streaming/sse-decoder.js';
import { fixtureBytes, randomChunks, seededRandom } from '../support/provider-fixtures.js';

const bytes = (text: string) => Buffer.from(text, 'utf8');

/** Decodes `chunks` in order, then flushes; every event, in order. */
function decode(chunks: Uint8Array[], decoder = new SseDecoder()): SseEvent[] {
  const events: SseEvent[] = [];
  for (const chunk of chunks) events.push(...decoder.push(chunk));
  events.push(...decoder.end());
  return events;
}

const FIXTURES = [
  ['gemini', 'stream-text.sse'],
  ['gemini', 'stream-function-call.sse'],
  ['gemini', 'stream-error.sse'],
  ['azure-openai', 'stream.sse'],
  ['azure-openai', 'stream-tool-call.sse'],
  ['azure-openai', 'stream-content-filter.sse'],
] as const;

/** A stream that exercises every rule: names, ids, comments, multi-line data, retry, unknown fields, UTF-8. */
const RICH = [
  ': opening comment',
  'retry: 3000',
  'event: message_start',
  'id: 1',
  'data: {"a":1}',
  '',
  ': ping',
  '',
  'data: first line',
  'data:second line, no space',
  'data:  two spaces keep one',
  'unknown: ignored',
  '',
  'event: delta',
  'data',
  '',
  'id: 2',
  'data: Grüße 👋🏽 日本 — ñ',
  '',
  '',
  '',
].join('\n');

const RICH_EVENTS: SseEvent[] = [
  { event: 'message_start', data: '{"a":1}', id: '1' },
  { event: null, data: 'first line\nsecond line, no space\n two spaces keep one', id: '1' },
  { event: 'delta', data: '', id: '1' },
  { event: null, data: 'Grüße 👋🏽 日本 — ñ', id: '2' },
];

describe('SseDecoder', () => {
  test('the WHATWG field rules: comments, event names, ids that persist, multi-line data, one leading space stripped', () => {
    expect(decode([bytes(RICH)])).toEqual(RICH_EVENTS);
  });

  test.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('%s line endings decode the same', (_name, eol) => {
    expect(decode([bytes(RICH.replace(/\n/g, eol))])).toEqual(RICH_EVENTS);
  });

  test('mixed line endings in one stream', () => {
    expect(decode([bytes('data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r')])).toEqual([
      { event: null, data: 'a\nb\nc', id: null },
      { event: null, data: 'd', id: null },
    ]);
  });

  test('every fixture, split at every single byte boundary, decodes as it does whole', () => {
    for (const [dir, name] of FIXTURES) {
      const whole = fixtureBytes(dir, name);
      const expected = decode([whole]);
      expect(expected.length).toBeGreaterThan(1);
      for (let cut = 0; cut <= whole.length; cut++) {
        const events = decode([whole.subarray(0, cut), whole.subarray(cut)]);
        if (JSON.stringify(events) !== JSON.stringify(expected)) throw new Error(`${dir}/${name}: split at byte ${cut} decodes differently`);
      }
    }
  });

  test('one byte at a time, including every multi-byte UTF-8 character split across chunks', () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const whole = bytes(RICH.replace(/\n/g, eol));
      expect(decode([...whole].map((b) => Uint8Array.of(b)))).toEqual(RICH_EVENTS);
    }
  });

  test('random chunkings (200 seeds per input, empty chunks included) never change the result', () => {
    const inputs = [...FIXTURES.map(([dir, name]) => fixtureBytes(dir, name)), bytes(RICH), bytes(RICH.replace(/\n/g, '\r\n')), bytes(RICH.replace(/\n/g, '\r'))];
    for (const input of inputs) {
      const expected = JSON.stringify(decode([input]));
      for (let seed = 1; seed <= 200; seed++) {
        const random = seededRandom(seed);
        const chunks = randomChunks(input, random, 1 + Math.floor(random() * 40));
        if (JSON.stringify(decode(chunks)) !== expected) throw new Error(`seed ${seed} decodes differently`);
      }
    }
  });

  test('an empty chunk between CR and LF does not turn one line break into two', () => {
    // Regression: "data: a\r" | "" | "\ndata: b" once dispatched `a` and `b` as two events.
    expect(decode([bytes('data: a\r'), new Uint8Array(0), bytes('\ndata: b\r\n\r\n')])).toEqual([{ event: null, data: 'a\nb', id: null }]);
  });

  test('a UTF-8 byte-order mark at the start is ignored', () => {
    expect(decode([Uint8Array.of(0xef, 0xbb), Uint8Array.of(0xbf), bytes('data: x\n\n')])).toEqual([{ event: null, data: 'x', id: null }]);
  });

  test('a final event without its blank line is still delivered at the end of the body', () => {
    expect(decode([bytes('data: one\n\ndata: two')])).toEqual([
      { event: null, data: 'one', id: null },
      { event: null, data: 'two', id: null },
    ]);
    expect(decode([bytes('data: three\r')])).toEqual([{ event: null, data: 'three', id: null }]);
  });

  test('pings and comments alone produce no events', () => {
    expect(decode([bytes(': ping\n\n:\n\n: keep-alive\r\n\r\n\n\n')])).toEqual([]);
  });

  test('an id with NUL is ignored; event names reset after each event, ids do not', () => {
    expect(decode([bytes('id: a\u0000b\nevent: x\ndata: 1\n\ndata: 2\n\n')])).toEqual([
      { event: 'x', data: '1', id: null },
      { event: null, data: '2', id: null },
    ]);
  });

  describe('bounded events', () => {
    test('one line over the bound, even unterminated and fed in small chunks, is an SseOverflowError', () => {
      const decoder = new SseDecoder(1024);
      expect(() => {
        for (let i = 0; i < 100; i++) decoder.push(bytes('x'.repeat(64)));
      }).toThrow(SseOverflowError);
    });

    test('many data lines that add up past the bound are an SseOverflowError', () => {
      const decoder = new SseDecoder(1024);
      expect(() => decoder.push(bytes('data: 0123456789\n'.repeat(200)))).toThrow(SseOverflowError);
    });

    test('the bound is per event: many events that together exceed it are fine', () => {
      const decoder = new SseDecoder(1024);
      const events = decode([bytes('data: 0123456789012345678901234567890123456789\n\n'.repeat(500))], decoder);
      expect(events).toHaveLength(500);
    });

    test('an event just under the bound passes', () => {
      const payload = 'y'.repeat(1000);
      expect(decode([bytes(`data: ${payload}\n\n`)], new SseDecoder(1024))).toEqual([{ event: null, data: payload, id: null }]);
    });
  });
});
