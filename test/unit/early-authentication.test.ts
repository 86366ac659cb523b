import Fastify, { type FastifyInstance } from 'fastify';
import { AdminApiError } from '../../modules/admin/admin-error.js';
import { generateApiKey, hashApiKey } from '../../modules/access/api-key/key-format.js';
import { GatewayAuthenticator } from '../../modules/access/gateway-authenticator.js';
import { EarlyAuthentication, deferContinue } from '../../modules/inference/http/early-authentication.js';
import type { Principal } from '../../projections/key-index/principal.js';
import type { KeyIndexProjection } from '../../projections/key-index/key-index.projection.js';
import { rawExchange } from '../support/raw-http.js';

const key = generateApiKey();
const principal = (scopes: string[]): Principal => ({
  keyId: 'k1', prefix: 'sk-sy-xx', tenantId: 't1', scopes: new Set(scopes) as Principal['scopes'], aliases: null,
  limits: {} as Principal['limits'], budget: null, expiresAt: null, tenant: { status: 'active', limits: {} as Principal['tenant']['limits'], budget: null },
});

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** A Fastify instance with the hook and routes that count how often a handler (and so a body parser) ran. */
interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  json(): any;
}

async function server(scopes: string[], closing = false): Promise<{ app: FastifyInstance; handled: string[]; inject: (options: { method: string; url: string; headers?: Record<string, string>; payload?: unknown }) => Promise<Answer>; url: string }> {
  const keys = { lookup: (hash: string) => (hash === hashApiKey(key) ? principal(scopes) : undefined) } as unknown as KeyIndexProjection;
  const admin = {
    identify: (headers: Record<string, unknown>) => {
      if (headers['x-admin-token'] === 'right') return 'admin:env';
      // A console session is looked up asynchronously: the hook waits for the answer.
      if (headers.cookie === 'switchyard_console=live') return new Promise((resolve) => setTimeout(() => resolve('console:alice'), 20));
      if (headers.cookie === 'switchyard_console=ended') {
        return new Promise((_resolve, reject) => setTimeout(() => reject(new AdminApiError(401, 'session_required', 'No console session.')), 20));
      }
      throw new AdminApiError(401, 'unauthorized', 'The admin token is not valid.');
    },
  };
  const handled: string[] = [];
  const app = Fastify();
  apps.push(app);
  deferContinue(app.server);
  app.addHook('onRequest', new EarlyAuthentication(new GatewayAuthenticator(keys), admin, () => closing).onRequest);
  for (const url of ['/v1/chat/completions', '/v1/messages', '/admin/v1/tenants']) app.post(url, async () => (handled.push(url), { ok: true }));
  app.get('/v1/models', async () => (handled.push('/v1/models'), { ok: true }));
  app.get('/healthz', async () => (handled.push('/healthz'), { ok: true }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const inject = async (options: { method: string; url: string; headers?: Record<string, string>; payload?: unknown }): Promise<Answer> => {
    const body = options.payload === undefined ? undefined : typeof options.payload === 'string' ? options.payload : JSON.stringify(options.payload);
    const response = await fetch(`${url}${options.url}`, { method: options.method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...options.headers }, body });
    const text = await response.text();
    return { statusCode: response.status, headers: Object.fromEntries(response.headers), json: () => JSON.parse(text) };
  };
  return { app, handled, inject, url };
}

describe('authentication before the body', () => {
  test('no key, an unknown key, a key without the scope: refused in the path’s envelope before any handler', async () => {
    const { handled, inject } = await server(['models:read']);
    const missing = await inject({ method: 'POST', url: '/v1/chat/completions', payload: { model: 'chat' } });
    expect(missing.statusCode).toBe(401);
    expect(missing.json().error).toMatchObject({ code: 'invalid_api_key', type: 'authentication_error' });
    expect(missing.headers['x-request-id']).toBeDefined();
    const unknown = await inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': generateApiKey() }, payload: {} });
    expect(unknown.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'Incorrect API key provided.' } });
    const scope = await inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: {} });
    expect(scope.statusCode).toBe(403);
    expect((await inject({ method: 'GET', url: '/v1/models', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);
    const admin = await inject({ method: 'POST', url: '/admin/v1/tenants', headers: { 'x-admin-token': 'wrong' }, payload: '{bad' });
    expect(admin.statusCode).toBe(401);
    expect(admin.json()).toEqual({ error: { code: 'unauthorized', message: 'The admin token is not valid.' } });
    expect(handled).toEqual(['/v1/models']);
  });

  test('accepted credentials reach the handler; paths outside /v1 and /admin need none', async () => {
    const { handled, inject } = await server(['inference']);
    expect((await inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: {} })).statusCode).toBe(200);
    expect((await inject({ method: 'POST', url: '/admin/v1/tenants', headers: { 'x-admin-token': 'right' }, payload: {} })).statusCode).toBe(200);
    expect((await inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect(handled).toEqual(['/v1/chat/completions', '/admin/v1/tenants', '/healthz']);
  });

  test('a console session found asynchronously lets the request through; one that ended is refused before the body', async () => {
    const { handled, inject } = await server([]);
    expect((await inject({ method: 'POST', url: '/admin/v1/tenants', headers: { cookie: 'switchyard_console=live' }, payload: {} })).statusCode).toBe(200);
    const ended = await inject({ method: 'POST', url: '/admin/v1/tenants', headers: { cookie: 'switchyard_console=ended' }, payload: '{bad' });
    expect(ended.statusCode).toBe(401);
    expect(ended.json()).toEqual({ error: { code: 'session_required', message: 'No console session.' } });
    expect(handled).toEqual(['/admin/v1/tenants']);
  });

  test('an unknown route is a 404 in the envelope without credentials', async () => {
    const { inject } = await server(['inference']);
    const anthropic = await inject({ method: 'POST', url: '/v1/messages/count', payload: {} });
    expect(anthropic.statusCode).toBe(404);
    expect(anthropic.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const admin = await inject({ method: 'DELETE', url: '/admin/v1/nothing' });
    expect(admin.json()).toEqual({ error: { code: 'not_found', message: 'Unknown route DELETE /admin/v1/nothing.' } });
  });

  test('a refused client that waits for 100 Continue gets a closed connection, an accepted one its Continue', async () => {
    const { url } = await server(['inference']);
    const head = (credentials: string) => `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n${credentials}content-type: application/json\r\ncontent-length: 2\r\nexpect: 100-continue\r\n\r\n`;
    const refused = await rawExchange(url, head(''), { giveUpMs: 2_000 });
    expect(refused).toMatchObject({ status: 401, closedByServer: true, headers: { connection: 'close' } });
    expect(refused.text).not.toContain('100 Continue');
    const accepted = await rawExchange(url, head(`authorization: Bearer ${key}\r\n`), { giveUpMs: 2_000, then: (socket) => socket.once('data', () => socket.end('{}')) });
    expect(accepted.text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
  });

  test('while the node shuts down every request gets 503 overloaded in its envelope, and its connection closes', async () => {
    const { handled, inject } = await server(['inference'], true);
    const openai = await inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: {} });
    expect(openai.statusCode).toBe(503);
    expect(openai.json().error).toMatchObject({ code: 'overloaded', type: 'service_unavailable_error' });
    expect(openai.headers).toMatchObject({ connection: 'close', 'retry-after': '1' });
    const anthropic = await inject({ method: 'POST', url: '/v1/messages', payload: {} });
    expect(anthropic.json()).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    const admin = await inject({ method: 'GET', url: '/admin/v1/tenants' });
    expect(admin.json().error).toMatchObject({ code: 'overloaded' });
    expect(handled).toEqual([]);
  });
});

describe('GatewayAuthenticator on the same headers twice (the hook, then the pipeline)', () => {
  test('a key changed in the headers is hashed anew, and every check runs again on the second call', () => {
    let current = principal(['inference']);
    const looked: string[] = [];
    const keys = { lookup: (hash: string) => (looked.push(hash), hash === hashApiKey(key) ? current : undefined) } as unknown as KeyIndexProjection;
    const auth = new GatewayAuthenticator(keys);
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    expect(auth.authenticate(headers, 'inference').keyId).toBe('k1');
    expect(auth.authenticate(headers, 'inference').keyId).toBe('k1');
    expect(looked).toEqual([hashApiKey(key), hashApiKey(key)]);
    current = { ...current, tenant: { ...current.tenant, status: 'suspended' } };
    expect(() => auth.authenticate(headers, 'inference')).toThrow(/suspended/);
    expect(() => auth.authenticate(headers, 'models:read')).toThrow(/suspended/);
    headers.authorization = `Bearer ${generateApiKey()}`;
    expect(() => auth.authenticate(headers, 'inference')).toThrow(/Incorrect API key/);
    expect(() => auth.authenticate({ 'x-api-key': key }, 'inference')).toThrow(/suspended/);
  });
});
