import { randomUUID } from 'node:crypto';
import { ConsoleBrowser } from '../support/console-browser.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';

/**
 * Issue 38, the console's server side: sign-in with the admin token, server-side sessions in an HttpOnly
 * SameSite=Strict cookie, CSRF tokens on changes, idle and absolute timeouts, sign-out, the sign-in rate
 * limit per client address, the security headers, and the events with their actor. Unhappy paths first.
 */
const ADMIN_TOKEN = 'console-session-admin-token-0123456789';
const IDLE_MS = 2_000;
const MAX_AGE_MS = 4_000;
const ATTEMPTS_PER_MINUTE = 20;

let gw: TestGateway;
const browsers: ConsoleBrowser[] = [];
const browser = (localAddress?: string) => {
  const created = new ConsoleBrowser(gw.url, localAddress);
  browsers.push(created);
  return created;
};

async function events(type: string) {
  const rows = await gw.gateway.platform.database.query<{ stream_id: string; data: any; metadata: any }>(
    `SELECT stream_id, data, metadata FROM events WHERE event_type = $1 ORDER BY global_position`, [type],
  );
  return rows;
}

beforeAll(async () => {
  gw = await startTestGateway({
    environment: {
      adminToken: ADMIN_TOKEN,
      console: { idleTimeoutMs: IDLE_MS, maxAgeMs: MAX_AGE_MS, signInAttemptsPerMinute: ATTEMPTS_PER_MINUTE },
    },
  });
});

afterAll(async () => {
  for (const each of browsers) await each.close();
  await gw?.close();
});

describe('sign-in with the admin token', () => {
  test('a wrong token is 401, sets no cookie, and is recorded as a refusal without the token', async () => {
    const client = browser('127.0.0.2');
    const wrong = `wrong-${randomUUID()}`;
    const response = await client.signInWithToken(wrong);
    expect(response.status).toBe(401);
    expect(response.json.error.code).toBe('unauthorized');
    expect(client.cookies.size).toBe(0);
    const refusals = await events('ConsoleSignInRefused');
    expect(refusals.at(-1)!.data).toMatchObject({ user: null, method: 'token', reason: 'invalid_token', clientAddress: '127.0.0.2' });
    expect(JSON.stringify(refusals)).not.toContain(wrong);
  });

  test('a body without a token is a validation error, not a sign-in', async () => {
    const response = await browser().send('POST', '/console/api/session', {});
    expect(response.status).toBe(400);
  });

  test('the right token opens a session: opaque HttpOnly SameSite=Strict cookie, role admin, a CSRF token, both deadlines', async () => {
    const client = browser();
    const before = Date.now();
    const response = await client.signInWithToken(ADMIN_TOKEN);
    expect(response.status).toBe(200);
    const setCookie = response.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^switchyard_console=[A-Za-z0-9]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
    // Plain HTTP listener: no Secure attribute (a browser would drop the cookie over http).
    expect(setCookie).not.toContain('Secure');
    expect(response.json).toMatchObject({ user: 'admin:env', role: 'admin', method: 'token' });
    expect(response.json.csrfToken).toMatch(/^[A-Za-z0-9]{43}$/);
    expect(Date.parse(response.json.idleExpiresAt) - before).toBeGreaterThanOrEqual(IDLE_MS - 50);
    expect(Date.parse(response.json.expiresAt) - before).toBeGreaterThanOrEqual(MAX_AGE_MS - 50);
    // The cookie is not the CSRF token, and nothing in the answer repeats the cookie.
    const cookie = client.cookies.get('switchyard_console')!;
    expect(response.text).not.toContain(cookie);
    const again = await client.get('/console/api/session');
    expect(again.status).toBe(200);
    expect(again.json.csrfToken).toBe(response.json.csrfToken);
    const signedIn = await events('ConsoleSignedIn');
    const last = signedIn.at(-1)!;
    expect(last.data).toMatchObject({ user: 'admin:env', role: 'admin', method: 'token' });
    expect(last.metadata).toMatchObject({ actor: 'console:admin:env', actorRole: 'admin' });
    expect(last.stream_id).toBe(`console-session-${last.data.sessionRef}`);
    const everything = JSON.stringify(await gw.gateway.platform.database.query(`SELECT data, metadata FROM events WHERE event_type LIKE 'Console%'`));
    expect(everything).not.toContain(ADMIN_TOKEN);
    expect(everything).not.toContain(cookie);
    expect(everything).not.toContain(response.json.csrfToken);
  });

  test('signing in again ends the session the browser had', async () => {
    const client = browser();
    await client.signInWithToken(ADMIN_TOKEN);
    const first = client.cookies.get('switchyard_console')!;
    expect((await client.signInWithToken(ADMIN_TOKEN)).status).toBe(200);
    expect(client.cookies.get('switchyard_console')).not.toBe(first);
    const stale = browser();
    stale.cookies.set('switchyard_console', first);
    expect((await stale.get('/console/api/session')).status).toBe(401);
  });

  test('the session API and refusals carry the console security headers', async () => {
    const response = await browser().get('/console/api/session');
    expect(response.status).toBe(401);
    expect(response.json.error.code).toBe('session_required');
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const unknown = await browser().get('/console/api/no-such-route');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('not_found');
    expect(unknown.headers.get('x-frame-options')).toBe('DENY');
    const config = await browser().get('/console/api/config');
    expect(config.status).toBe(200);
    expect(config.json).toEqual({ signIn: { token: true, oidc: null } });
    expect(config.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  test('a forged or unknown cookie is no session', async () => {
    const client = browser();
    client.cookies.set('switchyard_console', 'A'.repeat(43));
    expect((await client.get('/console/api/session')).status).toBe(401);
    const admin = await client.get('/admin/v1/status');
    expect(admin.status).toBe(401);
    expect(admin.json.error.code).toBe('session_required');
  });
});

describe('the admin API with a session cookie', () => {
  test('reads need no CSRF token; changes without it (or with a wrong one) are 403 and change nothing', async () => {
    const client = browser();
    await client.signInWithToken(ADMIN_TOKEN);
    expect((await client.get('/admin/v1/aliases')).status).toBe(200);
    const aliasEvents = async () => (await gw.gateway.platform.database.query(`SELECT 1 FROM events WHERE stream_id LIKE '%csrf-less%'`)).length;
    const missing = await client.change('PUT', '/admin/v1/aliases/csrf-less', { routes: [{ deployment: 'primary' }] }, { csrf: false });
    expect(missing.status).toBe(403);
    expect(missing.json.error.code).toBe('csrf_token_required');
    const wrong = await client.change('PUT', '/admin/v1/aliases/csrf-less', { routes: [{ deployment: 'primary' }] }, { csrf: false, headers: { 'x-csrf-token': 'x'.repeat(43) } });
    expect(wrong.status).toBe(403);
    expect(wrong.json.error.code).toBe('csrf_token_required');
    // Another session's CSRF token is not this one's.
    const other = browser();
    await other.signInWithToken(ADMIN_TOKEN);
    const crossed = await client.change('PUT', '/admin/v1/aliases/csrf-less', { routes: [{ deployment: 'primary' }] }, { csrf: false, headers: { 'x-csrf-token': other.csrfToken! } });
    expect(crossed.status).toBe(403);
    expect(await aliasEvents()).toBe(0);
    // Refused before the body is read: a body that is not even JSON gets the CSRF refusal, not a parse error.
    const early = await fetch(`${gw.url}/admin/v1/aliases/csrf-less`, {
      method: 'PUT', body: '{not json', headers: { 'content-type': 'application/json', cookie: `switchyard_console=${client.cookies.get('switchyard_console')}` },
    });
    expect(early.status).toBe(403);
    expect(((await early.json()) as { error: { code: string } }).error.code).toBe('csrf_token_required');
  });

  test('a change with the CSRF token is made, and its event names the console user and role', async () => {
    const client = browser();
    await client.signInWithToken(ADMIN_TOKEN);
    const response = await client.change('PUT', '/admin/v1/aliases/from-console', { routes: [{ deployment: 'primary' }] });
    expect(response.status).toBe(201);
    const rows = await gw.gateway.platform.database.query<{ metadata: any }>(
      `SELECT metadata FROM events WHERE stream_id LIKE '%from-console%' ORDER BY global_position DESC LIMIT 1`,
    );
    expect(rows[0].metadata).toMatchObject({ actor: 'console:admin:env', actorRole: 'admin', correlationId: response.headers.get('x-request-id') });
  });

  test('the admin token and gateway keys work as before, cookie or not, and need no CSRF token', async () => {
    const client = browser();
    await client.signInWithToken(ADMIN_TOKEN);
    const response = await client.change('PUT', '/admin/v1/aliases/from-token', { routes: [{ deployment: 'primary' }] }, { csrf: false, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(response.status).toBe(201);
    const rows = await gw.gateway.platform.database.query<{ metadata: any }>(
      `SELECT metadata FROM events WHERE stream_id LIKE '%from-token%' ORDER BY global_position DESC LIMIT 1`,
    );
    expect(rows[0].metadata.actor).toBe('admin:env');
    expect(rows[0].metadata.actorRole).toBeUndefined();
  });
});

describe('sign-out', () => {
  test('needs the CSRF token; then the session is gone server-side, the cookie cleared, and it is recorded', async () => {
    const client = browser();
    await client.signInWithToken(ADMIN_TOKEN);
    const cookie = client.cookies.get('switchyard_console')!;
    const refused = await client.change('DELETE', '/console/api/session', undefined, { csrf: false });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe('csrf_token_required');
    expect((await client.get('/console/api/session')).status).toBe(200);
    const out = await client.change('DELETE', '/console/api/session');
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^switchyard_console=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/);
    // A copy of the cookie kept elsewhere opens nothing any more.
    const replay = browser();
    replay.cookies.set('switchyard_console', cookie);
    expect((await replay.get('/console/api/session')).status).toBe(401);
    expect((await replay.get('/admin/v1/status')).status).toBe(401);
    const signedOut = (await events('ConsoleSignedOut')).at(-1)!;
    expect(signedOut.data).toMatchObject({ user: 'admin:env', role: 'admin' });
    expect(signedOut.metadata).toMatchObject({ actor: 'console:admin:env', actorRole: 'admin' });
  });
});

describe('timeouts', () => {
  test('an unused session ends after the idle timeout; a used one ends at the absolute timeout anyway', async () => {
    const idle = browser('127.0.0.5');
    const busy = browser('127.0.0.5');
    await idle.signInWithToken(ADMIN_TOKEN);
    await busy.signInWithToken(ADMIN_TOKEN);
    const start = Date.now();
    // The busy session is used every 0.6 s, well within the idle timeout.
    while (Date.now() - start < IDLE_MS + 400) {
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect((await busy.get('/console/api/session')).status).toBe(200);
    }
    const expired = await idle.get('/admin/v1/status');
    expect(expired.status).toBe(401);
    expect(expired.json.error.code).toBe('session_required');
    while (Date.now() - start < MAX_AGE_MS - 700) {
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect((await busy.get('/admin/v1/status')).status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, MAX_AGE_MS + 200 - (Date.now() - start))));
    const ended = await busy.get('/console/api/session');
    expect(ended.status).toBe(401);
    expect(ended.json.error.code).toBe('session_required');
  }, 20_000);
});

describe('the sign-in rate limit', () => {
  test('per client address: past the bound every attempt is 429 with retry-after, even with the right token; other addresses are unaffected', async () => {
    const flooder = browser('127.0.0.3');
    for (let attempt = 0; attempt < ATTEMPTS_PER_MINUTE; attempt++) {
      expect((await flooder.signInWithToken(`guess-${attempt}`)).status).toBe(401);
    }
    const limited = await flooder.signInWithToken(ADMIN_TOKEN);
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('sign_in_rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(flooder.cookies.size).toBe(0);
    const neighbour = browser('127.0.0.4');
    expect((await neighbour.signInWithToken(ADMIN_TOKEN)).status).toBe(200);
  });
});
