import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jest } from '@jest/globals';
import { exportJWK, generateKeyPair } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { parseOidcRoleMap } from '../../modules/console/oidc/oidc-role-map.js';
import { ensureConsoleBuilt, launchChromium, screenshot, seriousViolations } from '../support/console-pages.js';
import { startTestGateway, type TestGateway } from '../support/gateway-harness.js';

/**
 * Console single sign-on in a real browser: the sign-in page's button, a real OpenID provider (the
 * `oidc-provider` package, its development login and consent pages), and back to the console with a
 * session of the role the user's groups map to. A user without a role comes back refused, with the reason
 * on the page; a viewer and a finance user see the pages, and the server refuses their changes even when
 * the page is bypassed.
 */
const CLIENT_ID = 'switchyard-console';
const CLIENT_SECRET = 'console-browser-client-secret-0123456789';
const SECRET_ENV = `SY_TEST_CONSOLE_BROWSER_OIDC_${process.pid}_KEY`;
const GROUPS: Record<string, string[]> = { vera: ['everyone'], fiona: ['finance-team'], mallory: ['marketing'] };

let idp: Server;
let issuer: string;
let gw: TestGateway;
let browser: Browser;

beforeAll(async () => {
  process.env[SECRET_ENV] = CLIENT_SECRET;
  await ensureConsoleBuilt();
  let handler: Parameters<typeof createServer>[1] = (_request, response) => response.end();
  idp = createServer((request, response) => handler!(request, response));
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  [gw, browser] = await Promise.all([
    startTestGateway({
      environment: {
        console: {
          oidc: {
            name: 'Test IdP', issuer, clientId: CLIENT_ID, clientSecretRef: `env:${SECRET_ENV}`, redirectUrl: null,
            scopes: ['openid', 'groups'], roleClaim: 'groups',
            roleMap: parseOidcRoleMap('finance-team=finance,everyone=viewer', 'test'), clockToleranceSeconds: 0,
          },
        },
      },
    }),
    launchChromium(),
  ]);
  // The provider warns once about its quick-start parts (in-memory adapter, development interactions): test scaffolding.
  const quiet = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  const { default: OidcProvider } = await import('oidc-provider');
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const provider = new OidcProvider(issuer, {
    jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'browser-test-key' }] },
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [`${gw.url}/console/api/oidc/callback`], grant_types: ['authorization_code'], response_types: ['code'] }],
    async findAccount(_ctx, id) {
      if (!(id in GROUPS)) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, groups: GROUPS[id] }) };
    },
    claims: { openid: ['sub'], groups: ['groups'] },
    scopes: ['openid', 'groups'],
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    ttl: { IdToken: 600, AccessToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    cookies: { keys: ['console-browser-oidc-cookie-key'] },
    features: { devInteractions: { enabled: true } },
  });
  quiet.mockRestore();
  handler = provider.callback();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await new Promise((resolve) => idp?.close(resolve));
  delete process.env[SECRET_ENV];
});

/** From the console's sign-in page through the provider's login and consent pages, back to the console. */
async function signIn(user: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${gw.url}/console/`);
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  await page.locator('input[name="login"]').fill(user);
  await page.locator('input[name="password"]').fill('any');
  await page.locator('button[type="submit"]').click();
  // Consent, once per user and client.
  await page.waitForURL((url) => url.href.startsWith(gw.url) || url.pathname.startsWith('/interaction/'));
  if (!page.url().startsWith(gw.url)) await page.locator('button[type="submit"]').click();
  await page.waitForURL((url) => url.href.startsWith(`${gw.url}/console/`));
  return page;
}

/** A change sent from the page with the session's CSRF token, as the console's own code would send it. */
function changeFromPage(page: Page, method: string, path: string, body: unknown): Promise<{ status: number; code: string }> {
  // In-page code as text: this project compiles without the DOM's types.
  return page.evaluate(`(async () => {
    const session = await (await fetch('/console/api/session')).json();
    const response = await fetch(${JSON.stringify(path)}, {
      method: ${JSON.stringify(method)}, credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
      body: ${JSON.stringify(JSON.stringify(body))},
    });
    return { status: response.status, code: (await response.json()).error?.code ?? null };
  })()`);
}

test('a user whose groups map to no role comes back to the sign-in page with the reason, and no session', async () => {
  const page = await signIn('mallory');
  await page.getByRole('alert').filter({ hasText: 'has no console role' }).waitFor();
  expect(new URL(page.url()).searchParams.get('signInError')).toBe('no_role');
  expect((await page.context().cookies()).some((c) => c.name === 'switchyard_console')).toBe(false);
  await page.context().close();
});

test('a viewer signs in with single sign-on and reads the pages; the server refuses its changes', async () => {
  const page = await signIn('vera');
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  await expect(page.locator('.who-user').textContent()).resolves.toContain('vera');
  // The overview is the status area's: a viewer reads it.
  await page.getByRole('cell', { name: 'routing-snapshot' }).waitFor();
  await expect(page.locator('.who .badge').textContent()).resolves.toBe('viewer');
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, 'overview-viewer');

  await page.getByRole('link', { name: 'Catalog', exact: true }).click();
  await page.getByRole('cell', { name: 'model-primary' }).waitFor();
  // The page offers no change to a viewer …
  await expect(page.getByRole('button', { name: /^Edit alias/ }).count()).resolves.toBe(0);
  // … and the server refuses one sent anyway.
  await expect(changeFromPage(page, 'PUT', '/admin/v1/aliases/chat', { routes: [{ deployment: 'backup' }] }))
    .resolves.toEqual({ status: 403, code: 'role_forbidden' });
  await expect(changeFromPage(page, 'POST', '/admin/v1/tenants', { id: 'made-by-viewer' }))
    .resolves.toEqual({ status: 403, code: 'role_forbidden' });
  await page.context().close();
});

test('a finance user reads spend and cannot change tenants or keys', async () => {
  const page = await signIn('fiona');
  await page.getByRole('link', { name: 'Spend', exact: true }).click();
  await page.getByRole('heading', { name: /^Spend per day/ }).waitFor();
  await expect(page.locator('.who .badge').textContent()).resolves.toBe('finance');
  await page.getByRole('link', { name: 'Access', exact: true }).click();
  await page.getByRole('cell', { name: /acme/ }).first().waitFor();
  await expect(page.getByRole('button', { name: 'Create tenant' }).count()).resolves.toBe(0);
  await expect(changeFromPage(page, 'POST', '/admin/v1/keys', { tenant: 'acme' })).resolves.toEqual({ status: 403, code: 'role_forbidden' });
  await expect(changeFromPage(page, 'PUT', '/admin/v1/tenants/acme/budget', { monthlyUsd: '1' })).resolves.toEqual({ status: 403, code: 'role_forbidden' });
  await page.context().close();
});
