import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jest } from '@jest/globals';
import { exportJWK, generateKeyPair } from 'jose';
import type Provider from 'oidc-provider';
import { parseOidcRoleMap } from '../../modules/console/oidc/oidc-role-map.js';
import { ConsoleBrowser } from '../support/console-browser.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';

/**
 * Issue 38: console sign-in with OpenID Connect against a real OpenID provider (the `oidc-provider`
 * package) started here, driven over plain HTTP as a browser would (each redirect followed by hand, the
 * provider's login and consent forms posted). Unhappy paths first: a user without a mapped role, an ID
 * token for another client, an expired ID token, a forged, replayed or foreign state; then one
 * successful sign-in per role.
 */
const CLIENT_ID = 'switchyard-console';
const CLIENT_SECRET = 'console-client-secret-0123456789abcdef';
const OTHER_CLIENT_ID = 'other-app';
const OTHER_CLIENT_SECRET = 'other-app-secret-0123456789abcdef';
const OTHER_REDIRECT = 'http://127.0.0.1:9/other/callback';
const SECRET_ENV = `SY_TEST_CONSOLE_OIDC_${process.pid}_KEY`;

/** Users of the provider and the groups their ID tokens carry. */
const GROUPS: Record<string, string[]> = {
  alice: ['switchyard-admins', 'everyone'],
  oscar: ['ops-team', 'everyone'],
  fiona: ['finance-team'],
  audrey: ['audit'],
  victor: ['everyone'],
  mallory: ['marketing'],
  // Her groups are released by the UserInfo endpoint only, never in an ID token (OpenID Connect Core §5.4's default).
  uma: ['ops-team'],
};
const USERINFO_ONLY = new Set(['uma']);
const ROLE_MAP = 'switchyard-admins=admin,ops-team=operator,finance-team=finance,audit=auditor,everyone=viewer';

let idp: Server;
let issuer: string;
let provider: Provider;
let gw: TestGateway;
/** Lifetime of the ID tokens the provider mints now, in seconds. */
let idTokenTtl = 600;
/** What the provider's token endpoint answers the gateway: unchanged, or changed by the test. */
let tokenResponse: ((body: string) => Promise<string>) | null = null;
/** What its UserInfo endpoint answers: unchanged, or changed by the test. */
let userinfoResponse: ((body: string) => string) | null = null;
const browsers: ConsoleBrowser[] = [];

function browser(): ConsoleBrowser {
  const created = new ConsoleBrowser(gw.url);
  browsers.push(created);
  return created;
}

beforeAll(async () => {
  process.env[SECRET_ENV] = CLIENT_SECRET;
  // The provider's URL is its issuer, so it listens first; the gateway reads its discovery document only at the first sign-in.
  let handler: (request: IncomingMessage, response: ServerResponse) => void = (_request, response) => response.end();
  idp = createServer((request, response) => handler(request, response));
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  gw = await startTestGateway({
    environment: {
      console: {
        signInAttemptsPerMinute: 1_000,
        oidc: {
          name: 'Test IdP',
          issuer,
          clientId: CLIENT_ID,
          clientSecretRef: `env:${SECRET_ENV}`,
          redirectUrl: null,
          scopes: ['openid', 'email', 'groups'],
          roleClaim: 'groups',
          roleMap: parseOidcRoleMap(ROLE_MAP, 'test'),
          clockToleranceSeconds: 0,
        },
      },
    },
  });
  // The provider warns, once, about its quick-start parts (in-memory adapter, dev interactions, Node 20): test scaffolding, by design.
  const quiet = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  const { default: OidcProvider } = await import('oidc-provider');
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  provider = new OidcProvider(issuer, {
    jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test-signing-key' }] },
    clients: [
      { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [`${gw.url}/console/api/oidc/callback`], grant_types: ['authorization_code'], response_types: ['code'] },
      { client_id: OTHER_CLIENT_ID, client_secret: OTHER_CLIENT_SECRET, redirect_uris: [OTHER_REDIRECT], grant_types: ['authorization_code'], response_types: ['code'] },
    ],
    async findAccount(_ctx, id) {
      if (!(id in GROUPS)) return undefined;
      return {
        accountId: id,
        claims: async (use: string) => ({ sub: id, email: `${id}@example.com`, ...(use === 'userinfo' || !USERINFO_ONLY.has(id) ? { groups: GROUPS[id] } : {}) }),
      };
    },
    claims: { openid: ['sub'], email: ['email'], groups: ['groups'] },
    scopes: ['openid', 'email', 'groups'],
    // Claims of the scopes asked for go into the ID token (as many enterprise issuers put groups there).
    conformIdTokenClaims: false,
    // Every client must use PKCE: a sign-in that works proves the gateway sent a verifier matching its S256 challenge.
    pkce: { required: () => true },
    ttl: { IdToken: () => idTokenTtl, AccessToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    cookies: { keys: ['console-oidc-test-cookie-key'] },
    features: { devInteractions: { enabled: true } },
  });
  quiet.mockRestore();
  const callback = provider.callback();
  handler = (request, response) => {
    const rewrite = tokenResponse;
    if (rewrite && request.method === 'POST' && request.url?.startsWith('/token')) {
      // The provider's answer to the gateway's token request, changed (or delayed) on its way back.
      const end = response.end.bind(response) as (chunk?: unknown) => ServerResponse;
      (response as { end: unknown }).end = (chunk?: unknown) => {
        void rewrite(Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk ?? '')).then((body) => {
          response.setHeader('content-length', Buffer.byteLength(body));
          end(body);
        });
        return response;
      };
    }
    const changeUserinfo = userinfoResponse;
    if (changeUserinfo && request.url?.startsWith('/me')) {
      const end = response.end.bind(response) as (chunk?: unknown) => ServerResponse;
      (response as { end: unknown }).end = (chunk?: unknown) => {
        const body = changeUserinfo(Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk ?? ''));
        response.setHeader('content-length', Buffer.byteLength(body));
        return end(body);
      };
    }
    callback(request, response);
  };
}, 30_000);

afterAll(async () => {
  for (const each of browsers) await each.close();
  await gw?.close();
  await new Promise((resolve) => idp?.close(resolve));
  delete process.env[SECRET_ENV];
});

afterEach(() => {
  tokenResponse = null;
  userinfoResponse = null;
  idTokenTtl = 600;
});

/**
 * Signs `user` in at the provider, starting at `authorizeUrl`, posting its login and consent forms; returns
 * the URL the provider finally sends the browser to (the client's redirect URI with code and state).
 */
async function authenticateAtProvider(client: ConsoleBrowser, authorizeUrl: string, user: string): Promise<string> {
  let next = authorizeUrl;
  for (let hop = 0; hop < 12; hop++) {
    if (!next.startsWith(issuer)) return next;
    const response = await client.send('GET', next);
    if (response.status === 200 && next.includes('/interaction/')) {
      const prompt = /name="prompt" value="(\w+)"/.exec(response.text)?.[1];
      const action = new URL(/<form[^>]*action="([^"]+)"/.exec(response.text)![1], issuer).toString();
      const form = prompt === 'login' ? new URLSearchParams({ prompt, login: user, password: 'any' }) : new URLSearchParams({ prompt: prompt! });
      const posted = await client.send('POST', action, form);
      next = new URL(posted.headers.get('location')!, issuer).toString();
      continue;
    }
    expect([302, 303]).toContain(response.status);
    next = new URL(response.headers.get('location')!, issuer).toString();
  }
  throw new Error('the provider never sent the browser back');
}

/** The whole console sign-in: start at the gateway, authenticate at the provider, return to the gateway's callback. */
async function signIn(client: ConsoleBrowser, user: string, beforeCallback?: (authorizeUrl: URL) => Promise<void>) {
  const start = await client.get('/console/api/oidc/start');
  expect(start.status).toBe(302);
  const authorizeUrl = new URL(start.headers.get('location')!);
  await beforeCallback?.(authorizeUrl);
  const callbackUrl = await authenticateAtProvider(client, authorizeUrl.toString(), user);
  expect(callbackUrl.startsWith(`${gw.url}/console/api/oidc/callback?`)).toBe(true);
  const callback = await client.get(callbackUrl);
  return { start, authorizeUrl, callbackUrl, callback };
}

/** An ID token the provider issued to the other client, for `user`, carrying `nonce`. */
async function idTokenForOtherClient(user: string, nonce: string): Promise<string> {
  const other = new ConsoleBrowser(issuer);
  browsers.push(other);
  const verifier = 'v'.repeat(50);
  const { createHash } = await import('node:crypto');
  const authorize = new URL(`${issuer}/auth`);
  authorize.search = new URLSearchParams({
    client_id: OTHER_CLIENT_ID, response_type: 'code', redirect_uri: OTHER_REDIRECT, scope: 'openid email groups', nonce, state: 'other-state',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
  }).toString();
  const back = new URL(await authenticateAtProvider(other, authorize.toString(), user));
  const token = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${OTHER_CLIENT_ID}:${OTHER_CLIENT_SECRET}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: OTHER_REDIRECT, code_verifier: verifier }),
  });
  expect(token.status).toBe(200);
  return ((await token.json()) as { id_token: string }).id_token;
}

async function lastRefusal() {
  const rows = await gw.gateway.platform.database.query<{ data: any; metadata: any }>(
    `SELECT data, metadata FROM events WHERE event_type = 'ConsoleSignInRefused' ORDER BY global_position DESC LIMIT 1`,
  );
  return rows[0];
}

describe('OIDC sign-in: refusals', () => {
  test('the start asks for the code flow with PKCE S256, state and nonce, and binds the sign-in to this browser', async () => {
    const client = browser();
    const start = await client.get('/console/api/oidc/start');
    expect(start.status).toBe(302);
    const url = new URL(start.headers.get('location')!);
    expect(`${url.origin}${url.pathname}`).toBe(`${issuer}/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code', client_id: CLIENT_ID, redirect_uri: `${gw.url}/console/api/oidc/callback`, scope: 'openid email groups', code_challenge_method: 'S256',
    });
    for (const param of ['state', 'nonce', 'code_challenge']) expect(url.searchParams.get(param)!.length).toBeGreaterThanOrEqual(43);
    expect(start.headers.get('set-cookie')).toMatch(/^switchyard_console_oidc=[\w-]{43}; Path=\/console\/api\/oidc; HttpOnly; SameSite=Lax; Max-Age=600$/);
    const config = await client.get('/console/api/config');
    expect(config.json).toEqual({ signIn: { token: true, oidc: { name: 'Test IdP' } } });
  });

  test('a user none of whose groups maps to a role is refused: back to the console with no_role, no session, an event naming the user', async () => {
    const client = browser();
    const { callback } = await signIn(client, 'mallory');
    expect(callback.status).toBe(302);
    expect(callback.headers.get('location')).toBe('/console/?signInError=no_role');
    expect(client.cookies.has('switchyard_console')).toBe(false);
    expect((await client.get('/console/api/session')).status).toBe(401);
    const refusal = await lastRefusal();
    expect(refusal.data).toMatchObject({ user: 'mallory@example.com', method: 'oidc', reason: 'no_role' });
  });

  test('an ID token issued to another client (wrong audience) is refused, though signed by the issuer and carrying our nonce', async () => {
    const client = browser();
    const { callback } = await signIn(client, 'alice', async (authorizeUrl) => {
      const foreign = await idTokenForOtherClient('alice', authorizeUrl.searchParams.get('nonce')!);
      tokenResponse = async (body) => JSON.stringify({ ...JSON.parse(body), id_token: foreign });
    });
    expect(callback.headers.get('location')).toBe('/console/?signInError=invalid_id_token');
    expect(client.cookies.has('switchyard_console')).toBe(false);
    const refusal = await lastRefusal();
    expect(refusal.data).toMatchObject({ user: null, method: 'oidc', reason: 'invalid_id_token' });
    expect(refusal.data.detail).toMatch(/^claim aud/);
  });

  test('an expired ID token is refused', async () => {
    idTokenTtl = 1;
    // The provider's answer reaches the gateway 1.5 s after the token was minted: past its one-second life.
    tokenResponse = (body) => new Promise((resolve) => setTimeout(() => resolve(body), 1_500));
    const client = browser();
    const { callback } = await signIn(client, 'alice');
    expect(callback.headers.get('location')).toBe('/console/?signInError=invalid_id_token');
    expect(client.cookies.has('switchyard_console')).toBe(false);
    expect((await lastRefusal()).data).toMatchObject({ method: 'oidc', reason: 'invalid_id_token', detail: 'expired' });
  });

  test('a forged state, a callback from another browser and a replayed callback are refused as invalid_state', async () => {
    const forged = browser();
    const bad = await forged.get(`/console/api/oidc/callback?code=whatever&state=${'x'.repeat(43)}`);
    expect(bad.headers.get('location')).toBe('/console/?signInError=invalid_state');
    // A callback URL handed to another browser (login CSRF): it lacks the binding cookie of the browser that started.
    const starter = browser();
    const start = await starter.get('/console/api/oidc/start');
    const callbackUrl = await authenticateAtProvider(starter, start.headers.get('location')!, 'alice');
    const victim = browser();
    const foreign = await victim.get(callbackUrl);
    expect(foreign.headers.get('location')).toBe('/console/?signInError=invalid_state');
    expect(victim.cookies.has('switchyard_console')).toBe(false);
    // The state was used up by that attempt: the rightful browser cannot finish with it either.
    const late = await starter.get(callbackUrl);
    expect(late.headers.get('location')).toBe('/console/?signInError=invalid_state');
    // A successful callback replayed (same browser, same URL) opens no second session.
    const client = browser();
    const { callback, callbackUrl: used } = await signIn(client, 'victor');
    expect(callback.headers.get('location')).toBe('/console/');
    const replay = browser();
    for (const [name, value] of client.cookies) if (name !== 'switchyard_console') replay.cookies.set(name, value);
    const replayed = await replay.get(used);
    expect(replayed.headers.get('location')).toBe('/console/?signInError=invalid_state');
    expect(replay.cookies.has('switchyard_console')).toBe(false);
    expect((await lastRefusal()).data).toMatchObject({ method: 'oidc', reason: 'invalid_state' });
  });
});

describe('OIDC sign-in: the role claim from UserInfo', () => {
  test('an ID token without the role claim: the role is read from the UserInfo answer for the same subject', async () => {
    const client = browser();
    const { callback } = await signIn(client, 'uma');
    expect(callback.headers.get('location')).toBe('/console/');
    expect((await client.get('/console/api/session')).json).toMatchObject({ user: 'uma@example.com', role: 'operator', method: 'oidc' });
  });

  test('a UserInfo answer about another subject is not used: refused, no session', async () => {
    userinfoResponse = (body) => JSON.stringify({ ...JSON.parse(body), sub: 'alice', groups: ['switchyard-admins'] });
    const client = browser();
    const { callback } = await signIn(client, 'uma');
    expect(callback.headers.get('location')).toBe('/console/?signInError=invalid_id_token');
    expect(client.cookies.has('switchyard_console')).toBe(false);
    expect((await lastRefusal()).data).toMatchObject({ method: 'oidc', reason: 'invalid_id_token', detail: 'the UserInfo answer is about another subject than the ID token' });
  });

  test('an ID token that carries the role claim is enough: UserInfo is not asked', async () => {
    let asked = 0;
    userinfoResponse = (body) => { asked++; return body; };
    const client = browser();
    const { callback } = await signIn(client, 'oscar');
    expect(callback.headers.get('location')).toBe('/console/');
    expect(asked).toBe(0);
  });
});

describe('OIDC sign-in: one user per role', () => {
  test.each([
    ['alice', 'admin'], ['oscar', 'operator'], ['fiona', 'finance'], ['audrey', 'auditor'], ['victor', 'viewer'],
  ])('%s signs in with the role %s: session cookie, the session API names user and role, an event with the actor', async (user, role) => {
    const client = browser();
    const { callback } = await signIn(client, user);
    expect(callback.status).toBe(302);
    expect(callback.headers.get('location')).toBe('/console/');
    const setCookie = callback.headers.getSetCookie?.() ?? [];
    expect(setCookie.some((line: string) => /^switchyard_console=[A-Za-z0-9]{43}; Path=\/; HttpOnly; SameSite=Strict$/.test(line))).toBe(true);
    const session = await client.get('/console/api/session');
    expect(session.status).toBe(200);
    expect(session.json).toMatchObject({ user: `${user}@example.com`, role, method: 'oidc' });
    const rows = await gw.gateway.platform.database.query<{ data: any; metadata: any }>(
      `SELECT data, metadata FROM events WHERE event_type = 'ConsoleSignedIn' AND data->>'user' = $1 ORDER BY global_position DESC LIMIT 1`, [`${user}@example.com`],
    );
    expect(rows[0].data).toMatchObject({ role, method: 'oidc' });
    expect(rows[0].metadata).toMatchObject({ actor: `console:${user}@example.com`, actorRole: role });
    // Nothing of the credentials reaches the log.
    const logged = JSON.stringify(await gw.gateway.platform.database.query(`SELECT data, metadata FROM events WHERE event_type LIKE 'Console%'`));
    expect(logged).not.toContain(CLIENT_SECRET);
    expect(logged).not.toMatch(/eyJ[\w-]+\.eyJ/);
  });
});
