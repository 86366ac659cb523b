import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestGateway, sseData, startTestGateway } from '../support/gateway-harness.js';

/**
 * An upstream that echoes everything it was sent and everything it knows — its own credentials as it
 * received them (Authorization, x-api-key, base64 Basic), internal addresses, a DSN, tokens in common
 * formats, even the gateway's admin token and gateway key — in its 400/401/404/500 bodies, its headers
 * and its in-stream error events. Nothing of it may reach a client: status line, headers, body, SSE
 * events; both client formats, buffered and streamed, chat and embeddings (DESIGN §10).
 */
const ADMIN_TOKEN = 'redaction-admin-token-Qx7Wm2Lp9Rt4';
const UPSTREAM_KEY = 'echoed-provider-credential-Hq2Zp7Xk';
const DSN_PASSWORD = 'dsn-password-4242-Zk9';
const USEFUL = 'messages.0.content is too long for this model';
const FOREIGN_SECRETS = [
  'AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  'ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789',
  'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwx',
  'AKIAIOSFODNN7EXAMPLE',
  'sk-ant-api03-OtherTenantsKey-AbCdEf0123456789',
  'xoxb-123456789012-123456789012-AbCdEfGhIjKl',
  'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7',
];
const HOSTS = ['10.20.30.40', 'fd00::1234', 'db.prod.internal', 'pg.internal', 'metadata.google.internal', '169.254.169.254', 'vllm-backend'];

describe('provider error text never carries a secret, host or DSN to a client', () => {
  let gw: TestGateway;
  let echo: Server;
  let echoUrl = '';
  let gatewayKey = '';

  /**
   * What the upstream leaks, in three parts (each scenario names one, so every part reaches the redaction
   * whole instead of being cut by the length cap): credentials, addresses and DSNs, foreign token formats.
   */
  function leak(req: IncomingMessage, part: string): string {
    const basic = Buffer.from(`api:${UPSTREAM_KEY}`).toString('base64');
    switch (part) {
      case 'credentials':
        return `${USEFUL}. Authorization: ${req.headers.authorization ?? ''} x-api-key: ${req.headers['x-api-key'] ?? ''} (Basic ${basic}) `
          + `raw ${UPSTREAM_KEY} b64 ${Buffer.from(UPSTREAM_KEY).toString('base64')} url ${encodeURIComponent(UPSTREAM_KEY)} admin ${ADMIN_TOKEN} gateway ${gatewayKey}`;
      case 'addresses':
        return `${USEFUL}. routed by ${req.headers.host} to 10.20.30.40:5432, [fd00::1234]:8080, db.prod.internal:6432, dial tcp vllm-backend:8000, `
          + `metadata.google.internal, 169.254.169.254; dsn postgres://svc:${DSN_PASSWORD}@pg.internal:5432/main`;
      default:
        return `${USEFUL}. ${FOREIGN_SECRETS.slice(0, -1).join(' ')} -----BEGIN PRIVATE KEY-----\n${FOREIGN_SECRETS.at(-1)}\n-----END PRIVATE KEY-----`;
    }
  }

  function answer(req: IncomingMessage, res: ServerResponse, body: any): void {
    const anthropic = req.url!.endsWith('/messages');
    const scenario = String(body.model);
    const headers = {
      'content-type': 'application/json',
      'x-request-id': 'req_echo_0001', 'request-id': 'req_echo_0001',
      // Upstream headers are never relayed; these would leak if they were.
      'x-debug-authorization': String(req.headers.authorization ?? req.headers['x-api-key'] ?? ''), 'x-backend': '10.20.30.40:5432',
    };
    const text = leak(req, /(credentials|addresses|formats)$/.exec(scenario)?.[1] ?? 'credentials');
    const status = Number(/echo-(\d{3})/.exec(scenario)?.[1] ?? 200);
    if (status !== 200) {
      const type = status === 401 ? 'authentication_error' : status === 404 ? 'not_found_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
      res.writeHead(status, headers);
      res.end(JSON.stringify(anthropic ? { type: 'error', error: { type, message: text } } : { error: { message: text, type, code: null, param: null } }));
      return;
    }
    // 200: a stream that fails after its first output, its error event full of the same text.
    res.writeHead(200, { ...headers, 'content-type': 'text/event-stream' });
    if (anthropic) {
      res.write(`event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_echo', type: 'message', role: 'assistant', model: scenario, content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 1 } } })}\n\n`);
      res.write(`event: content_block_start\ndata: ${JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })}\n\n`);
      res.write(`event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Partial answer' } })}\n\n`);
      res.end(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: text } })}\n\n`);
    } else {
      res.write(`data: ${JSON.stringify({ id: 'chatcmpl-echo', object: 'chat.completion.chunk', created: 1, model: scenario, choices: [{ index: 0, delta: { role: 'assistant', content: 'Partial answer' }, finish_reason: null }] })}\n\n`);
      res.end(`data: ${JSON.stringify({ error: { message: text, type: 'server_error' } })}\n\n`);
    }
  }

  beforeAll(async () => {
    process.env.REDACTION_UPSTREAM_KEY = UPSTREAM_KEY;
    echo = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk) => (raw += chunk));
      req.on('end', () => answer(req, res, JSON.parse(raw || '{}')));
    });
    await new Promise<void>((done) => echo.listen(0, '127.0.0.1', () => done()));
    echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    const models = ['echo-400-credentials', 'echo-400-addresses', 'echo-400-formats', 'echo-404', 'echo-401', 'echo-500', 'echo-stream-credentials'];
    const yaml = (_mockUrl: string, keyEnv: string) => `
providers:
  - { id: echo-openai, type: openai-compatible, baseUrl: "${echoUrl}/v1", apiKey: "env:REDACTION_UPSTREAM_KEY", allowPrivateNetwork: true }
  - { id: echo-anthropic, type: anthropic, baseUrl: "${echoUrl}", apiKey: "env:REDACTION_UPSTREAM_KEY", allowPrivateNetwork: true }
deployments:
${['openai', 'anthropic'].flatMap((kind) => models.map((model) => `  - { id: ${kind}-${model}, provider: echo-${kind}, model: ${model}, capabilities: [chat, streaming${kind === 'openai' ? ', embeddings' : ''}], price: { inputPer1M: "1", outputPer1M: "2" } }`)).join('\n')}
aliases:
${['openai', 'anthropic'].flatMap((kind) => models.map((model) => `  - { name: ${kind}-${model}, policy: { maxAttempts: 1 }, routes: [{ deployment: ${kind}-${model} }] }`)).join('\n')}
tenants:
  - id: acme
apiKeys:
  - { id: acme-app, tenant: acme, key: "env:${keyEnv}", scopes: [inference] }
`;
    gw = await startTestGateway({ yaml, environment: { adminToken: ADMIN_TOKEN } });
    gatewayKey = gw.key;
  });
  afterAll(async () => {
    await gw?.close();
    echo.closeAllConnections();
    await new Promise<void>((done) => echo.close(() => done()));
  });

  interface Received {
    status: number;
    everything: string;
    body: string;
  }

  async function send(path: string, body: unknown): Promise<Received> {
    const anthropicClient = path === '/v1/messages';
    const response = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(anthropicClient ? { 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${gw.key}` }) },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    const headers = [...response.headers.entries()].map(([name, value]) => `${name}: ${value}`).join('\n');
    return { status: response.status, body: text, everything: `HTTP/1.1 ${response.status} ${response.statusText}\n${headers}\n\n${text}` };
  }

  function expectNothingLeaked(received: Received): void {
    const secrets = { UPSTREAM_KEY, DSN_PASSWORD, ADMIN_TOKEN, gatewayKey, base64Key: Buffer.from(UPSTREAM_KEY).toString('base64').slice(0, 20),
      basic: Buffer.from(`api:${UPSTREAM_KEY}`).toString('base64').slice(4, 24), echoHost: echoUrl.slice('http://'.length), dsn: 'postgres://' };
    for (const [name, value] of Object.entries({ ...secrets, ...Object.fromEntries(FOREIGN_SECRETS.map((s, i) => [`foreign${i}`, s])), ...Object.fromEntries(HOSTS.map((h) => [h, h])) })) {
      expect({ leaked: name, found: received.everything.includes(value) }).toEqual({ leaked: name, found: false });
    }
    expect(received.everything).not.toContain('x-debug-authorization');
    expect(received.everything).not.toContain('x-backend');
  }

  const chat = (model: string, stream = false) => ({ model, stream, max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] });

  describe.each([
    ['OpenAI client format', '/v1/chat/completions'],
    ['Anthropic client format', '/v1/messages'],
  ])('%s', (_format, path) => {
    describe.each(['openai', 'anthropic'])('upstream speaking %s', (kind) => {
      test.each(['credentials', 'addresses', 'formats'])('a 400 echoing %s keeps the provider text that helps, redacted, with the provider request id', async (part) => {
        for (const stream of [false, true]) {
          const received = await send(path, chat(`${kind}-echo-400-${part}`, stream));
          expect(received.status).toBe(400);
          expectNothingLeaked(received);
          expect(received.body).toContain(USEFUL);
          expect(received.body).toMatch(part === 'addresses' ? /\[host\].*\[url\]/ : /\[redacted\]/);
          // Nothing was cut by the length cap: what follows the redacted part is there too.
          expect(received.body).not.toContain('…');
          expect(received.body).toContain('req_echo_0001');
        }
      });

      test.each([
        ['echo-404', 404],
        ['echo-401', 502],
        ['echo-500', 503],
      ])('a %s answer forwards none of the provider text, only our message and the request id', async (scenario, status) => {
        for (const stream of [false, true]) {
          const received = await send(path, chat(`${kind}-${scenario}`, stream));
          expect(received.status).toBe(status);
          expectNothingLeaked(received);
          expect(received.body).not.toContain(USEFUL);
          expect(received.body).toContain('req_echo_0001');
        }
      });

      test('an error event inside a started stream carries no secret either', async () => {
        const received = await send(path, chat(`${kind}-echo-stream-credentials`, true));
        expect(received.status).toBe(200);
        const events = sseData(received.body);
        expect(received.body).toContain('Partial answer');
        expect(events.some((data) => data.includes('"error"'))).toBe(true);
        expect(events).not.toContain('[DONE]');
        expectNothingLeaked(received);
        // An Anthropic upstream calls it invalid_request_error (the caller's fault: its redacted text is shown);
        // an OpenAI upstream's server_error is not the caller's (only our words and the request id).
        if (kind === 'anthropic') expect(received.body).toContain(USEFUL);
        else expect(received.body).not.toContain(USEFUL);
      });
    });
  });

  test('embeddings: a 400 keeps the helpful text, redacted; a 401 and a 500 keep none, only the request id', async () => {
    const bad = await send('/v1/embeddings', { model: 'openai-echo-400-credentials', input: 'hello' });
    expect(bad.status).toBe(400);
    expectNothingLeaked(bad);
    expect(bad.body).toContain(USEFUL);
    const auth = await send('/v1/embeddings', { model: 'openai-echo-401', input: 'hello' });
    expect(auth.status).toBe(502);
    expectNothingLeaked(auth);
    expect(auth.body).not.toContain(USEFUL);
    expect(auth.body).toContain('req_echo_0001');
    const failed = await send('/v1/embeddings', { model: 'openai-echo-500', input: 'hello' });
    expect(failed.status).toBe(503);
    expectNothingLeaked(failed);
    expect(failed.body).not.toContain(USEFUL);
    expect(failed.body).toContain('req_echo_0001');
  });
});
