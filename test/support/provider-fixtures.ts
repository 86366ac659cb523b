import { readFileSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { ProviderType } from '../../events/provider-events.js';
import { type ChatRequest, UNSET_PARAMETERS } from '../../modules/canonical/chat-request.js';
import type { StreamEvent } from '../../modules/canonical/chat-response.js';
import type { UpstreamCall } from '../../modules/providers/provider-adapter.js';
import { Credential } from '../../projections/routing-snapshot/credential.js';
import type { ResolvedDeployment } from '../../projections/routing-snapshot/routing-snapshot.js';
import type { TokenUsage } from '../../events/index.js';
import { believedUsage } from './believed-usage.js';
import { seededRandom } from './seeded-random.js';
export { seededRandom };

/** Raw bytes of a golden fixture under test/fixtures (tests run from the repository root). */
export function fixtureBytes(...path: string[]): Buffer {
  return readFileSync(join(process.cwd(), 'test/fixtures', ...path));
}

export function fixtureJson(...path: string[]): any {
  return JSON.parse(fixtureBytes(...path).toString('utf8'));
}

/** A canonical request with every optional parameter at its default. */
export function chatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: 'alias',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
    maxOutputTokens: null,
    temperature: null,
    topP: null,
    stop: [],
    stream: false,
    includeUsage: false,
    tools: [],
    toolChoice: null,
    parallelToolCalls: null,
    responseFormat: null,
    seed: null,
    user: null,
    metadata: null,
    n: 1,
    ...UNSET_PARAMETERS,
    ...overrides,
  };
}

export function resolvedDeployment(
  type: ProviderType,
  overrides: { model?: string; apiVersion?: string | null; secret?: string | null; capabilities?: string[]; baseUrl?: string | null; allowPrivateNetwork?: boolean } = {},
): ResolvedDeployment {
  const secret = overrides.secret === undefined ? 'upstream-secret-value-123456' : overrides.secret;
  return {
    id: `${type}-deployment`,
    provider: {
      id: `${type}-provider`,
      type,
      baseUrl: overrides.baseUrl ?? null,
      apiVersion: overrides.apiVersion ?? null,
      region: null,
      credential: secret === null ? null : new Credential(secret),
      allowPrivateNetwork: overrides.allowPrivateNetwork ?? false,
    },
    model: overrides.model ?? 'model-x',
    region: null,
    capabilities: new Set(overrides.capabilities ?? ['chat', 'streaming', 'tools']),
    contextWindow: 128000,
    maxOutputTokens: 8192,
    quotaGroup: null,
    limits: { rpm: null, tpm: null, maxConcurrency: null },
    status: 'active',
    prices: [],
    fingerprint: 'test',
  };
}

/** What the fixture server saw of a call. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface FixtureReply {
  status?: number;
  headers?: Record<string, string>;
  /** Written in these pieces (each flushed separately), so the client sees arbitrary boundaries. */
  chunks: Buffer[];
}

/**
 * A real HTTP server that answers each call with the next scripted reply and records the request:
 * adapter tests run over a socket, like production, without the mock's own rendering.
 */
export class FixtureServer {
  readonly seen: SeenRequest[] = [];
  private readonly replies: FixtureReply[] = [];
  private readonly server: Server;
  pool: Pool | null = null;
  url = '';

  constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.pool = new Pool(this.url, { connections: 2 });
    return this;
  }

  reply(reply: FixtureReply): void {
    this.replies.push(reply);
  }

  call(request: ChatRequest, deployment: ResolvedDeployment, basePath = ''): UpstreamCall {
    return {
      request,
      deployment,
      dispatcher: this.pool!,
      baseUrl: new URL(`${this.url}${basePath}`),
      signal: new AbortController().signal,
      maxAnswerBytes: 16 * 1024 * 1024,
      headersTimeoutMs: 5000,
      idleTimeoutMs: 5000,
    };
  }

  async close(): Promise<void> {
    await this.pool?.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    this.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: text ? JSON.parse(text) : null });
    const reply = this.replies.shift();
    if (!reply) {
      res.writeHead(500).end('no scripted reply');
      return;
    }
    res.writeHead(reply.status ?? 200, reply.headers ?? {});
    for (const chunk of reply.chunks) {
      res.write(chunk);
      await new Promise((resolve) => setImmediate(resolve));
    }
    res.end();
  }
}

/** Drains a canonical event stream. */
export async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** Folds canonical events into what a client would see: text per choice, calls by index, finish, usage. */
export function fold(events: StreamEvent[]) {
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
    // The usage as the pipeline bills it (a fixture whose counts the boundary would not believe fails here).
    if (event.type === 'usage') usage = believedUsage(event.usage);
  }
  return { text, calls, finish, usage };
}


/** Splits bytes at `count` random cut points (sorted, possibly repeated: empty chunks are allowed). */
export function randomChunks(bytes: Uint8Array, random: () => number, count: number): Uint8Array[] {
  const cuts = Array.from({ length: count }, () => Math.floor(random() * (bytes.length + 1))).sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    chunks.push(bytes.subarray(start, cut));
    start = cut;
  }
  return chunks;
}
