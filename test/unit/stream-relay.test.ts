import { type IncomingHttpHeaders, type Server, type ServerResponse, createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StreamEvent } from '../../modules/canonical/chat-response.js';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { OpenAiChatStreamEncoder } from '../../modules/inference/formats/openai/openai-chat-stream.js';
import { RequestLifetime } from '../../modules/inference/pipeline/request-lifetime.js';
import { type StreamAttemptResult, StreamRelay } from '../../modules/inference/pipeline/stream-relay.js';
import { DEFAULT_RESILIENCE } from '../../modules/inference/resilience/resilience-settings.js';
import type { UpstreamStream } from '../../modules/providers/provider-adapter.js';
import { reported } from '../support/believed-usage.js';
import { reportedField } from '../../modules/canonical/index.js';

/** One step of a fake provider stream: an event, a failure, or silence until the call is aborted. */
type Step = StreamEvent | { fail: ProviderError } | { silence: true };

const text = (t: string): StreamEvent => ({ type: 'text', choice: 0, text: t });
const FINISH: StreamEvent = { type: 'finish', choice: 0, stopReason: 'stop' };
const USAGE: StreamEvent = { type: 'usage', usage: reported({ input: 3, cachedInput: 0, cacheWrite: 0, output: 2, reasoning: 0 }) };
const TERMS = { estimatedInputTokens: 3, bound: { input: 10_000, output: 10_000 } };
const SILENCE = { silence: true } as const;

/** A provider stream playing `steps`; it notes the signal it was opened with and whether its body was let go. */
function fakeUpstream(steps: Step[]) {
  const state = { signal: null as AbortSignal | null, released: false };
  const open = async (signal: AbortSignal): Promise<UpstreamStream> => {
    state.signal = signal;
    async function* events(): AsyncGenerator<StreamEvent> {
      try {
        for (const step of steps) {
          if ('silence' in step) await new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('This operation was aborted')), { once: true }));
          else if ('fail' in step) throw step.fail;
          else yield step;
        }
      } finally {
        state.released = true;
      }
    }
    return { providerRequestId: 'up-1', events: events() };
  };
  return { open, state };
}

/** What the server side saw: the attempt's result, whether anything was written before it, and the commit. */
interface ServerSide {
  result: StreamAttemptResult;
  /** Headers were sent when the attempt returned (the response was opened). */
  openedByAttempt: boolean;
  /** The response had not ended when the terminal events were committed. */
  committedBeforeEnd: boolean | null;
}

interface ClientSide {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server | null = null;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = null;
});

/**
 * Relays one attempt over `steps` to a real client through a real HTTP server on an ephemeral port,
 * wired as the chat pipeline wires it: the request's lifetime (client disconnect, request deadline) is
 * the relay's request abort. An attempt that reaches no client gets the plain 502 the pipeline would
 * answer after its last attempt. `hangUp`: the client leaves after its first bytes.
 */
async function relay(steps: Step[], options: { ttftLimitMs?: number; idleTimeoutMs?: number; hangUp?: boolean } = {}) {
  const upstream = fakeUpstream(steps);
  let settle!: (side: ServerSide) => void;
  const serverSide = new Promise<ServerSide>((resolve) => (settle = resolve));
  server = createServer((_req, res: ServerResponse) => {
    const lifetime = new RequestLifetime(res, 60_000);
    const relay = new StreamRelay({
      raw: res,
      requestId: 'req-1',
      encoder: new OpenAiChatStreamEncoder({ id: 'chatcmpl-1', created: 1, model: 'chat' }, false),
      deadlines: { ...DEFAULT_RESILIENCE.deadlines, idleTimeoutMs: options.idleTimeoutMs ?? 10_000 },
      requestAbort: lifetime.abort,
      onFirstOutput: () => lifetime.endRequestDeadline(),
    });
    void (async () => {
      const result = await relay.attempt(upstream.open, options.ttftLimitMs ?? 10_000, TERMS, () => undefined);
      const openedByAttempt = res.headersSent;
      let committedBeforeEnd: boolean | null = null;
      if (result.reachedClient) {
        await relay.finish(result, async () => void (committedBeforeEnd = !res.writableEnded), () => undefined);
      } else {
        res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: result.error.errorClass } }));
      }
      relay.dispose();
      lifetime.dispose();
      settle({ result, openedByAttempt, committedBeforeEnd });
    })();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = await new Promise<ClientSide>((resolve, reject) => {
    const req = get(`http://127.0.0.1:${port}/`, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        if (options.hangUp) {
          req.destroy();
          resolve({ status: res.statusCode!, headers: res.headers, body });
        }
      });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', (error) => (options.hangUp ? undefined : reject(error)));
  });
  return { client, server: await serverSide, upstream: upstream.state };
}

/** The `data:` payloads of an SSE body, in order. */
const frames = (body: string) => body.split('\n\n').filter((f) => f.startsWith('data: ')).map((f) => f.slice('data: '.length));
const contentOf = (frame: string) => (JSON.parse(frame) as { choices?: Array<{ delta: { content?: string } }> }).choices?.[0]?.delta.content;

describe('the stream relay', () => {
  test('frames are relayed in order, the events committed before the end marker, and the stream ends with data: [DONE]', async () => {
    const { client, server } = await relay([text('Hel'), text('lo, '), text('world'), FINISH, USAGE]);
    expect(client.status).toBe(200);
    expect(client.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(client.headers['x-request-id']).toBe('req-1');
    const sent = frames(client.body);
    expect(sent.at(-1)).toBe('[DONE]');
    expect(sent.slice(0, -1).map(contentOf).filter((c) => c)).toEqual(['Hel', 'lo, ', 'world']);
    expect(server.result).toMatchObject({ reachedClient: true, outcome: 'success', evidence: 'provider', usage: { input: 3, output: 2 }, providerRequestId: 'up-1' });
    expect(server.committedBeforeEnd).toBe(true);
  });

  test('a usage the provider reports in nonsense (a string, a negative count) never cuts the stream: [DONE], billed at the gateway\'s count, evidence implausible', async () => {
    const nonsense: StreamEvent = {
      type: 'usage',
      usage: { input: [reportedField('prompt_tokens', 'NaN', true)], cachedInput: [], cacheWrite: [], output: [reportedField('completion_tokens', -7, true)], reasoning: [] },
    };
    const { client, server } = await relay([text('Hello, '), text('world'), FINISH, nonsense]);
    expect(frames(client.body).at(-1)).toBe('[DONE]');
    // The gateway's counts: the estimate (TERMS: 3) and 12 relayed characters / 4.
    expect(server.result).toMatchObject({ reachedClient: true, outcome: 'success', evidence: 'implausible', usage: { input: 3, output: 3 } });
    expect((server.result as { implausible: { reported: Record<string, string> } }).implausible.reported).toEqual({ prompt_tokens: '"NaN"', completion_tokens: '-7' });
  });

  test('the first-token deadline passing before any output fails the attempt as a retryable timeout, with nothing written', async () => {
    const { client, server, upstream } = await relay([SILENCE], { ttftLimitMs: 50 });
    expect(server.openedByAttempt).toBe(false);
    expect(server.result).toMatchObject({ reachedClient: false, error: { errorClass: 'timeout', deadline: 'ttft' } });
    expect((server.result as { error: ProviderError }).error.fallbackable).toBe(true);
    expect(upstream.signal?.aborted).toBe(true);
    // Only the pipeline's own answer after the attempt reached the client: the relay wrote nothing.
    expect(client).toMatchObject({ status: 502, body: '{"error":{"code":"timeout"}}' });
  });

  test.each([
    ['a provider failure', [text('partial'), { fail: new ProviderError('transient', 'provider returned 500', 500) }], {}, 'upstream_error'],
    ['the idle deadline', [text('partial'), SILENCE], { idleTimeoutMs: 50 }, 'stream_idle_timeout'],
  ] as const)('%s after the first output settles the request: an error event ends the stream, no [DONE], no fallback', async (_name, steps, options, code) => {
    const { client, server, upstream } = await relay([...steps], options);
    expect(server.result).toMatchObject({ reachedClient: true, outcome: 'failed_partial' });
    expect(client.status).toBe(200);
    const sent = frames(client.body);
    expect(sent.map(contentOf)).toContain('partial');
    expect(sent).not.toContain('[DONE]');
    expect(JSON.parse(sent.at(-1)!)).toMatchObject({ error: { code } });
    expect(upstream.released).toBe(true);
  });

  test('a client that disconnects mid-stream cancels the upstream call; the attempt settles as cancelled with what was relayed', async () => {
    const { server, upstream } = await relay([text('first words'), SILENCE], { hangUp: true });
    expect(upstream.signal?.aborted).toBe(true);
    expect(upstream.signal?.reason).toMatchObject({ errorClass: 'cancelled' });
    expect(upstream.released).toBe(true);
    expect(server.result).toMatchObject({ reachedClient: true, outcome: 'cancelled', evidence: 'counted', usage: { input: 3, output: 3 } });
  });

  it('hands the first output to the socket before it asks the provider for the next event, and gathers the rest into one write', async () => {
    // A provider whose whole answer arrives in one read yields every event without a turn of the event loop.
    // Node corks a response's socket until the next tick: without an early flush the first frame would wait
    // for every later event to be translated and encoded.
    const seen: Array<{ corked: number; pending: number }> = [];
    let written = 0;
    server = createServer((_req, res: ServerResponse) => {
      const socket = res.socket!;
      const writev = socket._writev?.bind(socket);
      const write = socket._write.bind(socket);
      socket._writev = writev && ((chunks, callback) => (written++, writev(chunks, callback)));
      socket._write = (chunk, encoding, callback) => (written++, write(chunk, encoding, callback));
      const lifetime = new RequestLifetime(res, 60_000);
      const relay = new StreamRelay({
        raw: res,
        requestId: 'req-1',
        encoder: new OpenAiChatStreamEncoder({ id: 'chatcmpl-1', created: 1, model: 'chat' }, false),
        deadlines: { ...DEFAULT_RESILIENCE.deadlines, idleTimeoutMs: 10_000 },
        requestAbort: lifetime.abort,
        onFirstOutput: () => lifetime.endRequestDeadline(),
      });
      async function* events(): AsyncGenerator<StreamEvent> {
        yield text('one');
        seen.push({ corked: socket.writableCorked, pending: socket.writableLength });
        for (const t of ['two', 'three', 'four']) yield text(t);
        seen.push({ corked: socket.writableCorked, pending: socket.writableLength });
        yield FINISH;
        yield USAGE;
      }
      void (async () => {
        const result = await relay.attempt(async () => ({ providerRequestId: 'up-1', events: events() }), 10_000, TERMS, () => undefined);
        if (result.reachedClient) await relay.finish(result, async () => undefined, () => undefined);
        relay.dispose();
        lifetime.dispose();
      })();
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const body = await new Promise<string>((resolve, reject) => {
      get(`http://127.0.0.1:${port}/`, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve(text));
      }).on('error', reject);
    });
    expect(frames(body).slice(0, 5).map(contentOf)).toEqual(['', 'one', 'two', 'three', 'four']);
    // The first frame (with the headers) left at once; frames two to four were still being gathered.
    expect(seen[0]).toEqual({ corked: 0, pending: 0 });
    expect(seen[1].corked).toBeGreaterThan(0);
    // Headers and the first frame; then everything after it (the commit here takes no turn of the event loop).
    expect(written).toBe(2);
  });
});
