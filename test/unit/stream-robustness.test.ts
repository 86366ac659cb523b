import type { StreamEvent } from '../../modules/canonical/chat-response.js';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { GeminiStreamTranslator } from '../../modules/providers/gemini/gemini-stream.js';
import { OpenAiStreamTranslator } from '../../modules/providers/openai/openai-stream.js';
import { SseDecoder } from '../../modules/providers/streaming/sse-decoder.js';
import { type SseTranslator, translateSseBody } from '../../modules/providers/streaming/sse-translation.js';
import { collect, fixtureBytes, fold, randomChunks, seededRandom } from '../support/provider-fixtures.js';

/**
 * Property tests for decoder + translator together, driven through translateSseBody exactly as the
 * adapters run them: whatever the chunk boundaries, line endings, comments or pings, a stream yields
 * the same canonical events; a broken stream fails as malformed_response, never as a clean stop.
 */

interface Case {
  name: string;
  bytes: Buffer;
  translator: () => SseTranslator & { providerRequestId: string | null };
  /** What the client must end up with (checked once, so the equality checks below are not vacuous). */
  expected: ReturnType<typeof fold>;
}

const CASES: Case[] = [
  {
    name: 'gemini text (CRLF, thought part, multi-byte text)',
    bytes: fixtureBytes('gemini', 'stream-text.sse'),
    translator: () => new GeminiStreamTranslator(),
    expected: {
      text: 'The quick brown fox jumps over the lazy dog — très vite, 狐 🦊. Done.',
      calls: [],
      finish: 'stop',
      usage: { input: 10, cachedInput: 0, cacheWrite: 0, output: 66, reasoning: 42 },
    },
  },
  {
    name: 'gemini function calls',
    bytes: fixtureBytes('gemini', 'stream-function-call.sse'),
    translator: () => new GeminiStreamTranslator(),
    expected: {
      text: 'Checking the weather',
      calls: [
        { id: 'call_0', name: 'get_current_weather', arguments: '{"location":"Zürich","unit":"celsius"}' },
        { id: 'call_1', name: 'get_local_time', arguments: '{"timezone":"Europe/Zurich"}' },
      ],
      finish: 'tool_calls',
      usage: { input: 71, cachedInput: 0, cacheWrite: 0, output: 31, reasoning: 0 },
    },
  },
  {
    name: 'gemini max tokens',
    bytes: fixtureBytes('gemini', 'stream-max-tokens.sse'),
    translator: () => new GeminiStreamTranslator(),
    expected: { text: 'Here is a long answer that stops', calls: [], finish: 'length', usage: { input: 5, cachedInput: 0, cacheWrite: 0, output: 8, reasoning: 0 } },
  },
  {
    name: 'openai (Azure) text with prompt filter results',
    bytes: fixtureBytes('azure-openai', 'stream.sse'),
    translator: () => new OpenAiStreamTranslator(),
    expected: { text: 'Bonjour — café crème ☕ 東京!', calls: [], finish: 'stop', usage: { input: 20, cachedInput: 0, cacheWrite: 0, output: 9, reasoning: 0 } },
  },
  {
    name: 'openai (Azure) tool call in pieces',
    bytes: fixtureBytes('azure-openai', 'stream-tool-call.sse'),
    translator: () => new OpenAiStreamTranslator(),
    expected: {
      text: '',
      calls: [{ id: 'call_AzUreToolCall01', name: 'get_current_weather', arguments: '{"location": "München", "unit": "celsius"}' }],
      finish: 'tool_calls',
      usage: { input: 88, cachedInput: 0, cacheWrite: 0, output: 18, reasoning: 0 },
    },
  },
  {
    name: 'openai (Azure) content filter',
    bytes: fixtureBytes('azure-openai', 'stream-content-filter.sse'),
    translator: () => new OpenAiStreamTranslator(),
    expected: { text: 'The first part of the story', calls: [], finish: 'content_filter', usage: null },
  },
];

/** A response body as undici hands it over: async chunks, plus destroy(). */
function body(chunks: Uint8Array[]) {
  const state = { destroyed: false };
  return {
    state,
    async *[Symbol.asyncIterator]() {
      for (const chunk of chunks) yield chunk;
    },
    destroy() {
      state.destroyed = true;
    },
  };
}

async function translate(c: Case, chunks: Uint8Array[], decoder?: SseDecoder): Promise<StreamEvent[]> {
  return collect(translateSseBody(body(chunks), c.translator(), new AbortController().signal, decoder));
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  }
  throw new Error('expected the stream to fail');
}

const text = (bytes: Buffer) => bytes.toString('utf8');
const withEol = (bytes: Buffer, eol: string) => Buffer.from(text(bytes).replace(/\r\n|\r|\n/g, eol));

describe.each(CASES)('$name', (c) => {
  let expected: string;
  beforeAll(async () => {
    const events = await translate(c, [c.bytes]);
    expect(fold(events)).toEqual(c.expected);
    expected = JSON.stringify(events);
  });

  test('split into two chunks at every byte: identical events', async () => {
    for (let cut = 0; cut <= c.bytes.length; cut++) {
      const events = await translate(c, [c.bytes.subarray(0, cut), c.bytes.subarray(cut)]);
      if (JSON.stringify(events) !== expected) throw new Error(`split at byte ${cut} changed the events`);
    }
  });

  test('one byte per chunk, and 300 seeded random chunkings: identical events', async () => {
    expect(JSON.stringify(await translate(c, [...c.bytes].map((b) => Uint8Array.of(b))))).toBe(expected);
    for (let seed = 1; seed <= 300; seed++) {
      const random = seededRandom(seed);
      const events = await translate(c, randomChunks(c.bytes, random, 1 + Math.floor(random() * 30)));
      if (JSON.stringify(events) !== expected) throw new Error(`seed ${seed} changed the events`);
    }
  });

  test.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('%s line endings, also randomly chunked: identical events', async (_name, eol) => {
    const converted = withEol(c.bytes, eol);
    expect(JSON.stringify(await translate(c, [converted]))).toBe(expected);
    for (let seed = 1; seed <= 50; seed++) {
      if (JSON.stringify(await translate(c, randomChunks(converted, seededRandom(seed), 8))) !== expected) throw new Error(`seed ${seed} (${_name})`);
    }
  });

  test('comments and pings between and inside events change nothing', async () => {
    const pinged = text(c.bytes)
      .replace(/(^|\r\n\r\n|\n\n)(data:)/g, '$1: ping\r\n\r\n:keep-alive\n$2')
      .concat(': trailing ping\n\n');
    expect(pinged).not.toBe(text(c.bytes));
    expect(JSON.stringify(await translate(c, randomChunks(Buffer.from(pinged), seededRandom(7), 20)))).toBe(expected);
  });

  test('a frame truncated inside its JSON (body ends there) is malformed_response, at any cut point', async () => {
    const source = text(c.bytes);
    const random = seededRandom(99);
    const frames = [...source.matchAll(/data: (\{.*?\})(?=\r?\n)/g)];
    let checked = 0;
    for (const frame of frames) {
      const start = frame.index! + 'data: '.length;
      // Ten cut points strictly inside this frame's JSON.
      for (let i = 0; i < 10; i++) {
        const cut = start + 1 + Math.floor(random() * (frame[1].length - 1));
        const truncated = Buffer.from(source.slice(0, cut));
        const error = await failure(translate(c, randomChunks(truncated, random, 5)));
        expect(error.errorClass).toBe('malformed_response');
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(20);
  });

  test('an event over the decoder bound is malformed_response, and the body is released', async () => {
    const bloated = Buffer.concat([Buffer.from(`data: {"pad": "${'z'.repeat(4096)}"}\n\n`), c.bytes]);
    const upstream = body(randomChunks(bloated, seededRandom(3), 10));
    const error = await failure(collect(translateSseBody(upstream, c.translator(), new AbortController().signal, new SseDecoder(2048))));
    expect(error.errorClass).toBe('malformed_response');
    expect(upstream.state.destroyed).toBe(true);
  });
});

describe('stream endings', () => {
  const openAi = CASES[3];

  test('an OpenAI stream without [DONE] yields the same events (the body end is the end)', async () => {
    const withoutDone = Buffer.from(text(openAi.bytes).replace('data: [DONE]\n\n', ''));
    expect(withoutDone.length).toBeLessThan(openAi.bytes.length);
    expect(JSON.stringify(await translate(openAi, [withoutDone]))).toBe(JSON.stringify(await translate(openAi, [openAi.bytes])));
  });

  test('frames after [DONE] are read (the connection can be reused) but not translated', async () => {
    const trailing = Buffer.concat([openAi.bytes, Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"late"},"finish_reason":null}]}\n\n')]);
    const upstream = body([trailing]);
    const events = await collect(translateSseBody(upstream, openAi.translator(), new AbortController().signal));
    expect(fold(events).text).toBe(openAi.expected.text);
    expect(upstream.state.destroyed).toBe(false);
  });

  test('a consumer that stops early (client gone) destroys the upstream body', async () => {
    const upstream = body([openAi.bytes.subarray(0, 800), openAi.bytes.subarray(800)]);
    for await (const event of translateSseBody(upstream, openAi.translator(), new AbortController().signal)) {
      if (event.type === 'text') break;
    }
    expect(upstream.state.destroyed).toBe(true);
  });

  test('a hostile upstream that never sends a line break is stopped at the bound', async () => {
    const endless = Array.from({ length: 64 }, () => Buffer.from('x'.repeat(1024)));
    const upstream = body(endless);
    const error = await failure(collect(translateSseBody(upstream, new GeminiStreamTranslator(), new AbortController().signal, new SseDecoder(16 * 1024))));
    expect(error.errorClass).toBe('malformed_response');
    expect(upstream.state.destroyed).toBe(true);
  });

  test('a transport failure mid-body is typed, and an aborted request is cancelled', async () => {
    const broken = {
      async *[Symbol.asyncIterator]() {
        yield fixtureBytes('gemini', 'stream-text.sse').subarray(0, 300);
        throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      },
      destroy() {},
    };
    expect((await failure(collect(translateSseBody(broken, new GeminiStreamTranslator(), new AbortController().signal)))).errorClass).toBe('connection');
    const aborted = new AbortController();
    aborted.abort();
    expect((await failure(collect(translateSseBody(broken, new GeminiStreamTranslator(), aborted.signal)))).errorClass).toBe('cancelled');
  });
});
