import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_BEHAVIOUR, type MockBehaviour, type MockScenario } from './mock-behaviour.js';
import { type Frame, MockBadRequest, type MockFormat, type MockRenderContext } from './mock-format.js';
import { planAnswer } from './mock-script.js';
import { MOCK_EMBEDDINGS_FORMATS, type MockEmbeddingsFormat, mockEmbedding, mockEmbeddingTokens } from './mock-embeddings.js';
import { MOCK_FORMATS } from './mock-formats.js';
import { MOCK_TOKEN_COUNT_FORMATS, type MockTokenCountFormat, mockPromptTokens } from './mock-token-count.js';
import { DEFAULT_MODERATION_MARKER, openAiModerationMockFormat } from './mock-moderation.js';

/** What the mock saw of one request: tests assert on the calls the upstream received. */
export interface MockRequestRecord {
  seq: number;
  format: string;
  path: string;
  /** The query string's parameters (the path above has none). */
  query: Record<string, string>;
  model: string | null;
  stream: boolean;
  includeUsage: boolean;
  headers: Record<string, string>;
  body: unknown;
  receivedAt: number;
  endedAt: number | null;
  outcome: 'in-flight' | 'completed' | 'error-status' | 'fault' | 'aborted';
}

/** A unary endpoint's dialect as serveUnary needs it: parse and render bound to the request's path and query. */
interface MockUnaryEndpoint<Input> {
  readonly name: string;
  authProblem?(headers: IncomingMessage['headers'], path: string): { status: number; message: string } | null;
  /** Throws MockBadRequest when the body is not a valid request of this dialect. */
  parse(body: unknown): Input;
  render(input: Input, seq: number): unknown;
  errorBody(status: number, message: string): unknown;
  errorHeaders?(status: number): Record<string, string>;
}

const MAX_BODY = 8 * 1024 * 1024;
const MAX_LOG = 10_000;

/**
 * A provider stand-in: answers in each provider wire format with configurable timing and injected
 * faults, and records every call. Control endpoints live under /__mock.
 */
export class MockProviderServer {
  private readonly server: Server;
  private readonly formats: MockFormat[];
  private scenarios: Array<Required<Pick<MockScenario, 'behaviour'>> & MockScenario & { used: number }> = [];
  private readonly log: MockRequestRecord[] = [];
  private sequence = 0;
  /** The word that makes `/v1/moderations` flag an input (mock-moderation.ts). */
  moderationMarker = DEFAULT_MODERATION_MARKER;

  constructor(
    private defaults: MockBehaviour = DEFAULT_BEHAVIOUR,
    formats: MockFormat[] = MOCK_FORMATS,
  ) {
    this.formats = formats;
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 65_000;
  }

  async listen(port = 0, host = '127.0.0.1'): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve());
    });
    const address = this.server.address() as AddressInfo;
    return `http://${host}:${address.port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  addScenario(scenario: MockScenario): void {
    this.scenarios.push({ ...scenario, used: 0 });
  }

  clearScenarios(): void {
    this.scenarios = [];
  }

  setDefaults(behaviour: Partial<MockBehaviour>): void {
    this.defaults = { ...this.defaults, ...behaviour };
  }

  requests(): readonly MockRequestRecord[] {
    return this.log;
  }

  clearRequests(): void {
    this.log.length = 0;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [path, search = ''] = (req.url ?? '/').split('?');
    try {
      if (path.startsWith('/__mock/')) return await this.control(req, res, path);
      if (req.method === 'GET' && /\/models$/.test(path)) return json(res, 200, { object: 'list', data: [{ id: 'mock', object: 'model', created: 0, owned_by: 'switchyard-mock' }] });
      const embeddings = MOCK_EMBEDDINGS_FORMATS.find((f) => f.matches(req.method ?? 'GET', path));
      if (embeddings) return await this.serveEmbeddings(embeddings, req, res, path, new URLSearchParams(search));
      if (openAiModerationMockFormat.matches(req.method ?? 'GET', path)) return await this.serveModeration(req, res, path, new URLSearchParams(search));
      const counting = MOCK_TOKEN_COUNT_FORMATS.find((f) => f.matches(req.method ?? 'GET', path));
      if (counting) return await this.serveTokenCount(counting, req, res, path, new URLSearchParams(search));
      const format = this.formats.find((f) => f.matches(req.method ?? 'GET', path));
      if (!format) return json(res, 404, { error: { message: `no mock route for ${req.method} ${path}`, type: 'invalid_request_error', param: null, code: null } });
      await this.serve(format, req, res, path, new URLSearchParams(search));
    } catch (error) {
      if (!res.headersSent) json(res, 500, { error: { message: (error as Error).message, type: 'server_error', param: null, code: null } });
      else res.destroy();
    }
  }

  /** Logs one request as it arrives; a connection closed before the answer marks it aborted. */
  private record(format: string, req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): MockRequestRecord {
    const record: MockRequestRecord = {
      seq: ++this.sequence, format, path, query: Object.fromEntries(query), model: null, stream: false, includeUsage: false,
      headers: pickHeaders(req), body: null, receivedAt: Date.now(), endedAt: null, outcome: 'in-flight',
    };
    this.log.push(record);
    if (this.log.length > MAX_LOG) this.log.shift();
    res.on('close', () => {
      record.endedAt ??= Date.now();
      if (record.outcome === 'in-flight') record.outcome = 'aborted';
    });
    return record;
  }

  private async serve(format: MockFormat, req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> {
    const record = this.record(format.name, req, res, path, query);

    let body: unknown;
    try {
      body = JSON.parse((await readBody(req)).toString('utf8'));
    } catch {
      record.outcome = 'error-status';
      return json(res, 400, format.errorBody(400, 'the body is not valid JSON'), format.errorHeaders?.(400));
    }
    record.body = body;
    const refused = format.authProblem?.(req.headers, path);
    if (refused) {
      record.outcome = 'error-status';
      return json(res, refused.status, format.errorBody(refused.status, refused.message), format.errorHeaders?.(refused.status));
    }
    let input;
    try {
      input = format.parse(body, path, query);
    } catch (error) {
      if (!(error instanceof MockBadRequest)) throw error;
      record.outcome = 'error-status';
      return json(res, 400, format.errorBody(400, error.message), format.errorHeaders?.(400));
    }
    record.model = input.model;
    record.stream = input.stream;
    record.includeUsage = input.includeUsage;
    const behaviour = this.behaviourFor(input.model);
    const ctx: MockRenderContext = {
      id: `mock-${record.seq}`,
      created: Math.floor(Date.now() / 1000),
      input,
      answer: planAnswer(input, behaviour, record.seq),
      reportUsage: behaviour.usage,
      usageFields: behaviour.usageFields,
    };
    const closed = () => res.destroyed || record.outcome === 'aborted';

    if (behaviour.stall === 'before-headers') return; // never answer; the client gives up
    if (behaviour.latencyMs > 0) await sleep(behaviour.latencyMs);
    if (closed()) return;
    if (behaviour.status !== null) {
      const headers: Record<string, string> = { ...format.errorHeaders?.(behaviour.status) };
      if (behaviour.retryAfterSeconds !== null) headers['retry-after'] = String(behaviour.retryAfterSeconds);
      record.outcome = 'error-status';
      return json(res, behaviour.status, format.errorBody(behaviour.status, behaviour.errorMessage ?? `mock failure with status ${behaviour.status}`, behaviour.retryAfterSeconds), headers);
    }
    if (!input.stream) {
      record.outcome = 'completed';
      return json(res, 200, format.buffered(ctx), { 'x-request-id': ctx.id });
    }

    res.writeHead(200, { 'content-type': format.streamContentType, 'cache-control': 'no-cache', 'x-request-id': ctx.id });
    res.flushHeaders();
    if (behaviour.stall === 'before-first-token') return;
    if (behaviour.ttftMs > 0) await sleep(behaviour.ttftMs);
    write(res, format.streamStart(ctx));
    const thinking = ctx.answer.reasoningPieces;
    for (let i = 0; i < thinking.length; i++) {
      if (closed()) return;
      write(res, format.reasoningPiece(ctx, thinking[i], i));
    }
    if (thinking.length) write(res, format.reasoningEnd(ctx));
    const pieces = ctx.answer.toolCall ? ctx.answer.toolCall.argumentPieces : ctx.answer.textPieces;
    for (let i = 0; i < pieces.length; i++) {
      if (closed()) return;
      if (i > 0 && behaviour.chunkGapMs > 0) await sleep(behaviour.chunkGapMs);
      if (closed()) return;
      if (behaviour.dropAfterChunks !== null && i === behaviour.dropAfterChunks) {
        record.outcome = 'fault';
        res.destroy();
        return;
      }
      if (behaviour.malformedAfterChunks !== null && i === behaviour.malformedAfterChunks) {
        record.outcome = 'fault';
        write(res, [format.malformedFrame()]);
        res.end();
        return;
      }
      if (behaviour.errorAfterChunks !== null && i === behaviour.errorAfterChunks) {
        record.outcome = 'fault';
        write(res, format.streamError('mock failure inside the stream'));
        res.end();
        return;
      }
      if (behaviour.stall === 'mid-stream' && i === Math.floor(pieces.length / 2)) return;
      write(res, ctx.answer.toolCall ? format.toolPiece(ctx, pieces[i], i) : format.textPiece(ctx, pieces[i], i));
    }
    if (closed()) return;
    record.outcome = 'completed';
    write(res, format.streamEnd(ctx));
    res.end();
  }

  /** Embeddings: deterministic vectors, with the same latency and status faults as chat (no streams). */
  private serveEmbeddings(format: MockEmbeddingsFormat, req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> {
    return this.serveUnary(req, res, path, query, {
      ...format,
      parse: (body) => format.parse(body, path, query),
      render: (input) => format.render(input, input.inputs.map((text) => mockEmbedding(text, input.dimensions)), input.inputs.map(mockEmbeddingTokens)),
    });
  }

  /** OpenAI moderations: flagged when an input holds the marker, with the same latency and status faults as chat. */
  private serveModeration(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> {
    const format = openAiModerationMockFormat;
    return this.serveUnary(req, res, path, query, {
      name: format.name,
      authProblem: format.authProblem,
      errorBody: format.errorBody,
      parse: (body) => format.parse(body),
      render: (input, seq) => format.render(input, this.moderationMarker, `modr-mock-${seq}`),
    });
  }

  /** Token counting: the prompt tokens its answer would report, with the same latency and status faults as chat. */
  private serveTokenCount(format: MockTokenCountFormat, req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> {
    return this.serveUnary(req, res, path, query, { ...format, parse: (body) => format.parse(body, path), render: (input) => format.render(mockPromptTokens(input)) });
  }

  /**
   * A request answered with one JSON body (embeddings, moderations, token counts): the body parsed in the endpoint's
   * dialect, its auth checked, then the model's behaviour applied — a stall before the headers, latency, an injected
   * status — as for chat, every step recorded in the request log.
   */
  private async serveUnary<Input extends { model: string }>(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, endpoint: MockUnaryEndpoint<Input>): Promise<void> {
    const record = this.record(endpoint.name, req, res, path, query);
    const fail = (status: number, message: string, headers: Record<string, string> = {}) => {
      record.outcome = 'error-status';
      json(res, status, endpoint.errorBody(status, message), { ...endpoint.errorHeaders?.(status), ...headers });
    };
    try {
      record.body = JSON.parse((await readBody(req)).toString('utf8'));
    } catch {
      return fail(400, 'the body is not valid JSON');
    }
    const refused = endpoint.authProblem?.(req.headers, path);
    if (refused) return fail(refused.status, refused.message);
    let input: Input;
    try {
      input = endpoint.parse(record.body);
    } catch (error) {
      if (!(error instanceof MockBadRequest)) throw error;
      return fail(400, error.message);
    }
    record.model = input.model;
    const behaviour = this.behaviourFor(input.model);
    if (behaviour.stall === 'before-headers') return;
    if (behaviour.latencyMs > 0) await sleep(behaviour.latencyMs);
    if (res.destroyed) return;
    if (behaviour.status !== null) {
      return fail(behaviour.status, behaviour.errorMessage ?? `mock failure with status ${behaviour.status}`, behaviour.retryAfterSeconds !== null ? { 'retry-after': String(behaviour.retryAfterSeconds) } : {});
    }
    record.outcome = 'completed';
    json(res, 200, endpoint.render(input, record.seq), { 'x-request-id': `mock-${record.seq}` });
  }

  private behaviourFor(model: string): MockBehaviour {
    const scenario = this.scenarios.find((s) => (!s.model || s.model === model) && (s.times === undefined || s.used < s.times));
    let behaviour = this.defaults;
    if (scenario) {
      scenario.used++;
      behaviour = { ...this.defaults, ...scenario.behaviour };
    }
    if (behaviour.failureRate > 0) {
      const fail = Math.random() < behaviour.failureRate;
      behaviour = { ...behaviour, status: fail ? (behaviour.status ?? 500) : null };
    }
    return behaviour;
  }

  private async control(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (path === '/__mock/scenarios' && req.method === 'POST') {
      const scenario = JSON.parse((await readBody(req)).toString('utf8')) as MockScenario;
      this.addScenario(scenario);
      return json(res, 201, { scenarios: this.scenarios.length });
    }
    if (path === '/__mock/scenarios' && req.method === 'DELETE') {
      this.clearScenarios();
      return json(res, 200, { scenarios: 0 });
    }
    if (path === '/__mock/defaults' && req.method === 'POST') {
      this.setDefaults(JSON.parse((await readBody(req)).toString('utf8')) as Partial<MockBehaviour>);
      return json(res, 200, this.defaults);
    }
    if (path === '/__mock/requests' && req.method === 'GET') return json(res, 200, { requests: this.log });
    if (path === '/__mock/requests' && req.method === 'DELETE') {
      this.clearRequests();
      return json(res, 200, { requests: 0 });
    }
    return json(res, 404, { error: 'unknown mock control route' });
  }
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers });
  res.end(payload);
}

function write(res: ServerResponse, frames: Frame[]): void {
  for (const frame of frames) res.write(frame);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error('request body too large for the mock');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Records which auth and version headers arrived (values of secrets are masked). */
const PLAIN_HEADERS = new Set(['content-type', 'accept', 'anthropic-version', 'anthropic-beta', 'x-amz-date', 'traceparent', 'tracestate']);

function pickHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['authorization', 'x-api-key', 'api-key', 'anthropic-version', 'anthropic-beta', 'x-goog-api-key', 'content-type', 'accept', 'x-amz-date', 'x-amz-security-token', 'traceparent', 'tracestate']) {
    const value = req.headers[name];
    if (typeof value === 'string') out[name] = PLAIN_HEADERS.has(name) ? value : mask(value);
  }
  return out;
}

function mask(value: string): string {
  return value.length <= 8 ? '***' : `${value.slice(0, 4)}***${value.slice(-2)}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
