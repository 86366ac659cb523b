import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { Agent, request } from 'undici';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { type RawExchange, openFileLimit, rawExchange } from '../support/raw-http.js';

/**
 * Issue 8, observed items 7 and 10 / Build 8: unfinished bodies and silent connections are closed by
 * their timeouts, the connection cap refuses what is beyond it, credentials are checked before a body
 * is read, and everything the HTTP layer answers is in the client format of the path.
 */
const hello = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'Hello there, gateway!' }] });

const connections = (gw: TestGateway) =>
  new Promise<number>((resolve, reject) => (gw.gateway.app.getHttpServer() as Server).getConnections((error, count) => (error ? reject(error) : resolve(count))));

async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`${what} not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('unfinished bodies and idle connections are closed by their timeouts while requests keep being served', () => {
  const HEADERS_TIMEOUT_MS = 1_000;
  const BODY_TIMEOUT_MS = 2_000;
  const KEEPALIVE_TIMEOUT_MS = 1_000;
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({
      environment: { http: { headersTimeoutMs: HEADERS_TIMEOUT_MS, bodyTimeoutMs: BODY_TIMEOUT_MS, keepAliveTimeoutMs: KEEPALIVE_TIMEOUT_MS, maxConnections: 20_000 } },
    });
  });
  afterAll(async () => {
    await gw.close();
  });

  test('5,000 connections with unfinished bodies (half content-length, half chunked), silent and idle keep-alive ones', async () => {
    // Each connection costs two descriptors here (client and server side); stay well inside the limit.
    const limit = openFileLimit();
    const stalled = Math.min(5_000, limit === null ? 5_000 : Math.floor((limit - 1_500) / 2.2) & ~1);
    if (stalled < 5_000) process.stderr.write(`[note] open-file limit ${limit}: ${stalled} unfinished bodies instead of 5,000\n`);
    const silent = 100;
    const idle = 100;
    const contentLength = `POST /v1/chat/completions HTTP/1.1\r\nhost: gw\r\nauthorization: Bearer ${gw.key}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"model":"chat",`;
    const chunked = `POST /v1/messages HTTP/1.1\r\nhost: gw\r\nx-api-key: ${gw.key}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n10\r\n{"model":"chat",\r\n`;

    const exchanges: Array<{ kind: 'content-length' | 'chunked' | 'silent' | 'idle'; done: Promise<RawExchange> }> = [];
    const open = async (kind: 'content-length' | 'chunked' | 'silent' | 'idle', count: number) => {
      const payload = kind === 'content-length' ? contentLength : kind === 'chunked' ? chunked : kind === 'idle' ? 'GET /healthz HTTP/1.1\r\nhost: gw\r\n\r\n' : null;
      for (let start = 0; start < count; start += 250) {
        const connected: Array<Promise<void>> = [];
        for (let i = start; i < Math.min(count, start + 250); i++) {
          let onConnect!: () => void;
          connected.push(new Promise<void>((resolve) => (onConnect = resolve)));
          exchanges.push({ kind, done: rawExchange(gw.url, payload, { giveUpMs: 30_000, then: () => onConnect() }) });
        }
        await Promise.all(connected);
      }
    };
    await open('content-length', stalled / 2);
    await open('chunked', stalled / 2);
    await open('silent', silent);
    await open('idle', idle);

    // Normal traffic meanwhile, on connections of its own.
    const agent = new Agent({ connections: 8, keepAliveTimeout: 200 });
    const statuses: number[] = [];
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (let i = 0; i < 10; i++) {
        try {
          const response = await request(`${gw.url}/v1/chat/completions`, {
            method: 'POST', dispatcher: agent, body: hello,
            headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
          });
          await response.body.text();
          statuses.push(response.statusCode);
        } catch {
          statuses.push(0);
        }
      }
    }));
    await agent.close();

    const results = await Promise.all(exchanges.map(async ({ kind, done }) => ({ kind, result: await done })));
    const failures = statuses.filter((status) => status !== 200);
    expect(statuses).toHaveLength(80);
    expect(failures.length).toBeLessThanOrEqual(1);

    // One verdict per connection, counted: what each one saw, in a form that names what went wrong.
    const verdicts = new Map<string, number>();
    for (const { kind, result } of results) {
      const verdict = [
        kind,
        // Closed by the gateway, never by this test giving up.
        result.closedByServer ? 'closed by the gateway' : 'left open',
        result.status,
        // Exactly one answer per connection; the keep-alive timeout closes an idle one without a word.
        `${result.text.match(/HTTP\/1\.1 /g)?.length ?? 0} answer(s)`,
        kind === 'idle' ? '' : result.headers.connection,
        kind === 'idle' ? '' : kind === 'chunked' ? `${result.json?.type}/${result.json?.error?.type}` : result.json?.error?.code,
        /request body/.test(result.json?.error?.message ?? '') ? 'body timeout' : /request headers/.test(result.json?.error?.message ?? '') ? 'headers timeout' : '',
        result.headers['x-request-id'] ? 'request id' : 'no request id',
        // Never before the timeout that applies.
        result.closedAfterMs >= (kind === 'silent' ? HEADERS_TIMEOUT_MS : kind === 'idle' ? KEEPALIVE_TIMEOUT_MS : BODY_TIMEOUT_MS) - 50 ? 'after its timeout' : `early (${result.closedAfterMs} ms)`,
      ].join(' | ');
      verdicts.set(verdict, (verdicts.get(verdict) ?? 0) + 1);
    }
    expect(Object.fromEntries(verdicts)).toEqual({
      'content-length | closed by the gateway | 408 | 1 answer(s) | close | request_timeout | body timeout | request id | after its timeout': stalled / 2,
      'chunked | closed by the gateway | 408 | 1 answer(s) | close | error/timeout_error | body timeout | request id | after its timeout': stalled / 2,
      // No request line ever arrived: the OpenAI envelope, and no request id.
      'silent | closed by the gateway | 408 | 1 answer(s) | close | request_timeout | headers timeout | no request id | after its timeout': silent,
      'idle | closed by the gateway | 200 | 1 answer(s) |  |  |  | no request id | after its timeout': idle,
    });
    await waitFor(async () => (await connections(gw)) === 0, 5_000, 'all connections closed');
  }, 90_000);
});

describe('the connection cap, authentication before the body, and the HTTP layer’s answers in the client format', () => {
  const ADMIN_TOKEN = 'admin-token-for-http-hardening-0123';
  const MAX_CONNECTIONS = 64;
  const BODY_TIMEOUT_MS = 1_500;
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({
      environment: {
        adminToken: ADMIN_TOKEN,
        http: { headersTimeoutMs: 1_000, bodyTimeoutMs: BODY_TIMEOUT_MS, keepAliveTimeoutMs: 8_000, maxConnections: MAX_CONNECTIONS },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
  });

  type Kind = 'openai' | 'anthropic' | 'admin';
  const PATHS: Record<Kind, string> = { openai: '/v1/chat/completions', anthropic: '/v1/messages', admin: '/admin/v1/tenants' };
  const credentials = (kind: Kind) =>
    kind === 'anthropic' ? `x-api-key: ${gw.key}\r\n` : `authorization: Bearer ${kind === 'admin' ? ADMIN_TOKEN : gw.key}\r\n`;
  const post = (kind: Kind, options: { path?: string; headers?: string; body?: string; contentLength?: number; contentType?: string } = {}) => {
    const body = options.body ?? '';
    return `POST ${options.path ?? PATHS[kind]} HTTP/1.1\r\nhost: gw\r\n${credentials(kind)}content-type: ${options.contentType ?? 'application/json'}\r\n` +
      `content-length: ${options.contentLength ?? Buffer.byteLength(body)}\r\n${options.headers ?? ''}\r\n${body}`;
  };

  /** The envelope of each format, and never Fastify's `{statusCode, error, message}`. */
  function expectEnvelope(kind: Kind, result: RawExchange, status: number, withRequestId: boolean): void {
    expect(result.status).toBe(status);
    expect(result.headers['content-type']).toMatch(/^application\/json/);
    expect(result.json).not.toHaveProperty('statusCode');
    if (kind === 'openai') expect(result.json.error).toMatchObject({ message: expect.any(String), type: expect.any(String), code: expect.any(String) });
    if (kind === 'anthropic') expect(result.json).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
    if (kind === 'admin') {
      expect(result.json.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
      expect(result.json.error.type).toBeUndefined();
    }
    if (withRequestId) expect(result.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    else expect(result.headers['x-request-id']).toBeUndefined();
  }

  const kinds: Kind[] = ['openai', 'anthropic', 'admin'];

  test.each(kinds)('%s: malformed JSON is a 400 in the envelope', async (kind) => {
    const result = await rawExchange(gw.url, post(kind, { body: '{"model": "chat",' }), { untilResponse: true });
    expectEnvelope(kind, result, 400, true);
    if (kind !== 'anthropic') expect(result.json.error.code).toBe('invalid_json');
  });

  test.each(kinds)('%s: a body that stops arriving is a 408 in the envelope, and the connection is closed', async (kind) => {
    const result = await rawExchange(gw.url, post(kind, { body: '{"model":', contentLength: 100 }));
    expectEnvelope(kind, result, 408, true);
    expect(result.closedByServer).toBe(true);
    expect(result.closedAfterMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 50);
  });

  test.each(kinds)('%s: a body over the limit is a 413 in the envelope before it is read', async (kind) => {
    const result = await rawExchange(gw.url, post(kind, { body: '{"model":', contentLength: 5 * 1024 * 1024 }), { untilResponse: true });
    expectEnvelope(kind, result, 413, true);
  });

  test.each(kinds)('%s: chunk extensions over Node’s limit are a 413 in the envelope', async (kind) => {
    const chunked = post(kind, { contentLength: 0 }).replace('content-length: 0\r\n', 'transfer-encoding: chunked\r\n') + `5;${'x'.repeat(20_000)}\r\n`;
    const result = await rawExchange(gw.url, chunked, { untilResponse: true });
    expectEnvelope(kind, result, 413, true);
  });

  test.each(kinds)('%s: another content type is refused in the envelope', async (kind) => {
    const result = await rawExchange(gw.url, post(kind, { body: hello, contentType: 'text/plain' }), { untilResponse: true });
    expectEnvelope(kind, result, kind === 'admin' ? 415 : 400, true);
    if (kind !== 'anthropic') expect(result.json.error.code).toBe('unsupported_content_type');
  });

  test.each(kinds)('%s: headers over 16 KiB are a 431 in the envelope', async (kind) => {
    const result = await rawExchange(gw.url, post(kind, { headers: `x-filler: ${'a'.repeat(20_000)}\r\n`, body: hello }), { untilResponse: true });
    expectEnvelope(kind, result, 431, false);
  });

  test.each(kinds)('%s: a malformed request is a 400 in the envelope', async (kind) => {
    const result = await rawExchange(gw.url, post(kind, { headers: 'this line is not a header\r\n', body: hello }), { untilResponse: true });
    expectEnvelope(kind, result, 400, false);
  });

  test.each(kinds)('%s: an unknown route is a 404 in the envelope', async (kind) => {
    const result = await rawExchange(gw.url, post(kind, { path: `${PATHS[kind]}/nothing-here`, body: hello }), { untilResponse: true });
    expectEnvelope(kind, result, 404, true);
  });

  test.each(kinds)('%s: a URL that does not decode is a 400 in the envelope', async (kind) => {
    const result = await rawExchange(gw.url, post(kind, { path: `${PATHS[kind]}/%zz`, body: hello }), { untilResponse: true });
    expectEnvelope(kind, result, 400, true);
  });

  test('a path parameter over the router’s limit is a 414 in the envelope', async () => {
    const openai = await rawExchange(gw.url, `GET /v1/models/${'m'.repeat(300)} HTTP/1.1\r\nhost: gw\r\n${credentials('openai')}\r\n`, { untilResponse: true });
    expectEnvelope('openai', openai, 414, true);
    const admin = await rawExchange(gw.url, `GET /admin/v1/tenants/${'t'.repeat(300)} HTTP/1.1\r\nhost: gw\r\n${credentials('admin')}\r\n`, { untilResponse: true });
    expectEnvelope('admin', admin, 414, true);
  });

  test('a request with no credentials is refused with 401 before its body is read', async () => {
    // 3.7 MB announced, 16 KB sent: the answer arrives while the body is still being written.
    const announced = 3_700_000;
    for (const [kind, headers] of [['openai', ''], ['openai', 'authorization: Bearer sk-sy-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\n'], ['anthropic', 'x-api-key: wrong\r\n'], ['admin', 'x-admin-token: wrong-token\r\n']] as const) {
      const head = `POST ${PATHS[kind]} HTTP/1.1\r\nhost: gw\r\n${headers}content-type: application/json\r\ncontent-length: ${announced}\r\n\r\n`;
      const result = await rawExchange(gw.url, head + '{"model":"chat","messages":[' + ' '.repeat(16_000), { untilResponse: true, giveUpMs: BODY_TIMEOUT_MS - 500 });
      expectEnvelope(kind, result, 401, true);
    }
    // A client that waits for "100 Continue" is refused without it, so it never sends the body at all.
    const expecting = await rawExchange(gw.url, `POST ${PATHS.openai} HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\ncontent-length: ${announced}\r\nexpect: 100-continue\r\n\r\n`, { giveUpMs: 2_000 });
    expect(expecting).toMatchObject({ status: 401, closedByServer: true });
    expect(expecting.text).not.toContain('100 Continue');
    // With valid credentials the same unfinished body is awaited: the refusal above came before reading.
    const waited = await rawExchange(gw.url, post('openai', { body: '{"model":"chat",', contentLength: announced }), { untilResponse: true, giveUpMs: 500 });
    expect(waited.status).toBeNull();
  });

  test('the admin API checks the token before it looks at the body', async () => {
    const malformed = `POST /admin/v1/tenants HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\ncontent-length: 5\r\n\r\n{bad`;
    const unauthenticated = await rawExchange(gw.url, malformed, { untilResponse: true });
    expectEnvelope('admin', unauthenticated, 401, true);
    expect(unauthenticated.json.error.code).toBe('unauthorized');
    const authenticated = await rawExchange(gw.url, post('admin', { body: '{bad' }), { untilResponse: true });
    expectEnvelope('admin', authenticated, 400, true);
  });

  test('connections beyond the cap are closed on accept; served connections and the gateway carry on', async () => {
    await waitFor(async () => (await connections(gw)) === 0, 5_000, 'no connections left from earlier tests');
    // Fill the cap with keep-alive connections that each served one request and now sit idle.
    const held: Socket[] = [];
    const { connect } = await import('node:net');
    const { hostname, port } = new URL(gw.url);
    const keepAlive = () =>
      new Promise<Socket>((resolve, reject) => {
        const socket = connect(Number(port), hostname, () => socket.write('GET /healthz HTTP/1.1\r\nhost: gw\r\n\r\n'));
        socket.once('data', (chunk) => (chunk.toString().startsWith('HTTP/1.1 200') ? resolve(socket) : reject(new Error(chunk.toString()))));
        socket.once('error', reject);
      });
    for (let i = 0; i < MAX_CONNECTIONS; i++) held.push(await keepAlive());
    expect(await connections(gw)).toBe(MAX_CONNECTIONS);

    const refused = await Promise.all(Array.from({ length: 20 }, () => rawExchange(gw.url, `POST /v1/chat/completions HTTP/1.1\r\nhost: gw\r\n\r\n`, { giveUpMs: 5_000 })));
    for (const result of refused) {
      expect(result.closedByServer).toBe(true);
      expect(result.status).toBeNull();
    }
    expect(await connections(gw)).toBe(MAX_CONNECTIONS);

    // A connection that was accepted is still served in full.
    const served = await new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      held[0].on('data', (chunk) => {
        chunks.push(chunk);
        const text = Buffer.concat(chunks).toString();
        if (text.includes('"choices"')) resolve(text);
      });
      held[0].write(post('openai', { body: hello }));
    });
    expect(served).toMatch(/^HTTP\/1\.1 200/);

    // Below the cap again, new connections are accepted.
    for (const socket of held.splice(0, 4)) socket.destroy();
    await waitFor(async () => (await connections(gw)) <= MAX_CONNECTIONS - 4, 2_000, 'released connections');
    const fresh = await rawExchange(gw.url, post('openai', { body: hello }), { untilResponse: true });
    expect(fresh.status).toBe(200);
    for (const socket of held) socket.destroy();
  });
});
