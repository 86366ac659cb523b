import type { Browser, BrowserContext, Page } from 'playwright-core';
import { AdminClient, waitUntil } from '../support/admin-client.js';
import { ensureConsoleBuilt, launchChromium, REFRESHING_DOCS_IMAGES, screenshot, seriousViolations } from '../support/console-pages.js';
import { postJson, startTestGateway, type TestGateway } from '../support/gateway-harness.js';

/**
 * The console in a real browser (Debian's Chromium, playwright-core) against a gateway with the mock
 * provider: sign-in with the admin token, every page with axe-core's serious and critical rules, the key
 * life cycle through the playground, an alias edited through its dry run, the audit verification, and
 * hostile strings shown as text. One gateway and one browser for the suite; the steps build on each other.
 */
const ADMIN_TOKEN = 'console-browser-admin-token-0123456789abcdef';
/** Would run script if the page ever used it as HTML: an img whose failing load sets a global. */
const XSS = '<img src=x onerror="window.__consoleXss=1"><script>window.__consoleXss=2</script>';
const BULK_KEYS = 55;

describe('the console in a browser', () => {
  let gw: TestGateway;
  let admin: AdminClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const scriptErrors: string[] = [];
  const cspReports: string[] = [];

  beforeAll(async () => {
    await ensureConsoleBuilt();
    [gw, browser] = await Promise.all([startTestGateway({ environment: { adminToken: ADMIN_TOKEN } }), launchChromium()]);
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
    expect((await admin.post('/tenants', { id: 'hostile', name: XSS })).status).toBe(201);
    expect((await admin.post('/tenants/hostile/suspend', { reason: XSS })).status).toBe(200);
    // More keys than one page of the console (50) holds: the Access page reads them a page at a time.
    expect((await admin.post('/tenants', { id: 'many-keys' })).status).toBe(201);
    for (let i = 0; i < BULK_KEYS; i++) expect((await admin.post('/keys', { id: `bulk-${String(i).padStart(2, '0')}`, tenant: 'many-keys', scopes: ['inference'] })).status).toBe(201);
    // A content policy attached somewhere: the Access page lists it with where (the API says `tenant many-keys`).
    expect((await admin.put('/content-policies/console-pii', { input: { email: 'mask' } })).status).toBe(201);
    expect((await admin.put('/tenants/many-keys/content-policy', { contentPolicy: 'console-pii' })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await postJson(gw, '/v1/chat/completions', { model: 'chat', messages: [{ role: 'user', content: `hello ${i}` }] })).status).toBe(200);
    context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
    page = await context.newPage();
    page.on('pageerror', (error) => scriptErrors.push(error.message));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspReports.push(message.text());
    });
    // Revoking asks for confirmation.
    page.on('dialog', (dialog) => void dialog.accept());
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  afterEach(() => {
    // No step may leave a script error or a CSP refusal behind (inline code would be one).
    expect(scriptErrors).toEqual([]);
    expect(cspReports).toEqual([]);
  });

  async function open(label: string, heading = label): Promise<void> {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: label, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
  }

  async function expectAccessible(name: string): Promise<void> {
    const violations = await seriousViolations(page);
    expect({ page: name, violations }).toEqual({ page: name, violations: [] });
  }

  test('/console answers with the security headers; the page refuses a wrong admin token, then signs in with a cookie session', async () => {
    const index = await fetch(`${gw.url}/console/requests`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-security-policy')).toMatch(/script-src 'self';.*frame-ancestors 'none'/);
    expect(index.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    expect(index.headers.get('x-frame-options')).toBe('DENY');
    expect(index.headers.get('cache-control')).toBe('no-store');
    const asset = /\/console\/assets\/[^"]+\.js/.exec(await index.text())![0];
    expect((await fetch(`${gw.url}${asset}`)).headers.get('cache-control')).toMatch(/immutable/);
    // An unknown asset is a 404 (never the page, which a script tag would choke on); so is a name reaching out of assets/.
    for (const path of ['/console/assets/index-00000000.js', '/console/assets/..%2f..%2fpackage.json', '/console/assets/nested/index.js']) {
      const missing = await fetch(`${gw.url}${path}`);
      expect({ path, status: missing.status }).toEqual({ path, status: 404 });
      expect(missing.headers.get('content-security-policy')).toContain("default-src 'self'");
    }
    const unknownApi = await fetch(`${gw.url}/console/api/nothing-here`);
    expect(unknownApi.status).toBe(404);
    expect(((await unknownApi.json()) as { error: { code: string } }).error.code).toBe('not_found');

    await page.goto(`${gw.url}/console`);
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    await expectAccessible('sign-in');
    await screenshot(page, 'sign-in');
    await page.getByLabel('Admin token').fill('not-the-admin-token-at-all-0000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'not accepted' }).waitFor();

    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const cookie = (await context.cookies()).find((c) => c.name === 'switchyard_console');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    // Nothing of the session or the token is kept where a script could read it.
    // (In-page code is passed as text: this project compiles without the DOM's types.)
    expect(await page.evaluate('[localStorage.length, sessionStorage.length, document.cookie]')).toEqual([0, 0, '']);
  });

  test('every page shows its data without a serious accessibility violation', async () => {
    await page.getByText('Requests / s').waitFor();
    await page.getByRole('cell', { name: 'routing-snapshot' }).waitFor();
    await expectAccessible('overview');
    // The traffic chart draws from the second refresh on (every 5 s); the docs' picture waits for a few.
    if (REFRESHING_DOCS_IMAGES) await page.waitForTimeout(16_000);
    await screenshot(page, 'overview');

    await open('Catalog');
    await page.getByRole('cell', { name: 'model-primary' }).waitFor();
    await page.getByRole('button', { name: 'Price history of primary' }).click();
    await page.getByRole('heading', { name: 'Price history of primary' }).waitFor();
    await expectAccessible('catalog');
    await screenshot(page, 'catalog');

    await open('Access');
    await page.getByRole('cell', { name: /acme/ }).first().waitFor();
    await page.getByRole('row', { name: /console-pii/ }).getByRole('cell', { name: 'tenant many-keys', exact: true }).waitFor();
    await expectAccessible('access');
    await screenshot(page, 'access');

    await open('Requests');
    const first = page.getByRole('link', { name: /^[0-9a-f]{8}-/ }).first();
    await first.waitFor();
    await expect(page.getByRole('link', { name: /^[0-9a-f]{8}-/ }).count()).resolves.toBe(3);
    await expectAccessible('requests');
    await screenshot(page, 'requests');
    // Filters go to the server: no request of tenant hostile, then acme's three again.
    await page.getByLabel('Tenant').fill('hostile');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No request matches.').waitFor();
    expect(new URL(page.url()).searchParams.get('tenant')).toBe('hostile');
    await page.getByLabel('Tenant').fill('acme');
    await page.getByLabel('Status').selectOption('success');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: /^[0-9a-f]{8}-/ }).nth(2).waitFor();
    await expect(page.getByRole('link', { name: /^[0-9a-f]{8}-/ }).count()).resolves.toBe(3);
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ tenant: 'acme', status: 'success' });
    await first.click();
    await page.getByRole('heading', { level: 1, name: 'Request' }).waitFor();
    await page.getByRole('heading', { name: 'Attempts' }).waitFor();
    await page.getByText('RequestCompleted').waitFor();
    await expect(page.getByRole('cell', { name: /primary/ }).first().isVisible()).resolves.toBe(true);
    await expectAccessible('request');
    await screenshot(page, 'request');

    await open('Spend');
    await page.getByRole('list', { name: 'Spend by tenant' }).getByText('acme').waitFor();
    await expectAccessible('spend');
    await screenshot(page, 'spend');
    const csv = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    expect((await csv).suggestedFilename()).toMatch(/^spend-day-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);

    await open('Audit');
    await page.getByRole('cell', { name: 'TenantCreated' }).first().waitFor();
    await expectAccessible('audit');

    await open('Playground');
    await page.getByLabel('API key').waitFor();
    await expectAccessible('playground');
  });

  test('a tenant name and an event reason carrying markup render as text, never as HTML', async () => {
    await open('Access');
    await page.getByText(XSS, { exact: true }).waitFor();
    await open('Audit');
    const events = page.getByRole('region', { name: 'Events' });
    await events.getByLabel('Stream (e.g. alias-chat)').fill('tenant-hostile');
    await events.getByRole('button', { name: 'Filter' }).click();
    // Until the filtered page replaces the first one, rows of the whole log are on screen (the hostile tenant's events
    // among them): the summaries are collected only once every row shown is of the filtered stream.
    const rows = events.locator('tbody tr');
    await waitUntil(async () => {
      const shown = await rows.allInnerTexts();
      return shown.length > 0 && shown.every((row) => row.includes('tenant-hostile'));
    }, 10_000, 'the events of stream tenant-hostile alone');
    await events.getByRole('cell', { name: 'TenantSuspended' }).waitFor();
    for (const summary of await events.locator('td details summary').all()) await summary.click();
    // TenantCreated's name and TenantSuspended's reason, shown as the text they are.
    await expect(events.locator('pre.json').filter({ hasText: '<img src=x onerror=' }).count()).resolves.toBe(2);
    // The payload is text in the DOM: no element came out of it, and its handlers never ran.
    expect(await page.evaluate(`({ ran: window.__consoleXss ?? null, injected: document.querySelectorAll('img[src="x"], main script').length })`))
      .toEqual({ ran: null, injected: 0 });
  });

  test('a tenant with more keys than a page shows the first page from the server, and the next one on request', async () => {
    const pages: string[] = [];
    const watch = (request: { url: () => string }) => {
      if (request.url().includes('/admin/v1/keys')) pages.push(new URL(request.url()).search);
    };
    page.on('request', watch);
    await open('Access');
    await page.getByRole('button', { name: 'Manage many-keys' }).click();
    const keys = page.getByRole('region', { name: 'API keys of many-keys' });
    await keys.getByText('50 keys shown; there are more.').waitFor();
    await expect(keys.locator('tbody tr').count()).resolves.toBe(50);
    await expect(keys.getByRole('cell', { name: /^bulk-49/ }).count()).resolves.toBe(1);
    await expect(keys.getByRole('cell', { name: /^bulk-50/ }).count()).resolves.toBe(0);
    await keys.getByRole('button', { name: 'Load more keys' }).click();
    await keys.getByText(`All ${BULK_KEYS} keys shown.`).waitFor();
    await expect(keys.locator('tbody tr').count()).resolves.toBe(BULK_KEYS);
    await keys.getByRole('cell', { name: /^bulk-54/ }).waitFor();
    await expect(keys.getByRole('button', { name: 'Load more keys' }).count()).resolves.toBe(0);
    await expectAccessible('access-key-pages');
    page.off('request', watch);
    // Two requests, one a page: never the whole list, never one per key.
    expect(pages).toEqual([
      '?tenant=many-keys&limit=50',
      `?tenant=many-keys&limit=50&pageToken=${Buffer.from('bulk-49').toString('base64url')}`,
    ]);
    // A key of the second page is changed from there like any other; the pages read again keep it shown.
    await page.getByRole('button', { name: 'Revoke key bulk-52' }).click();
    await page.getByText('Key bulk-52 revoked.').waitFor();
    await keys.getByRole('row', { name: /^bulk-52/ }).getByText('revoked', { exact: true }).waitFor();
    await expect(keys.locator('tbody tr').count()).resolves.toBe(BULK_KEYS);
    await page.getByRole('button', { name: 'Manage many-keys' }).click();
  });

  test('a key issued on the Access page answers in the playground, and is refused there once revoked', async () => {
    await open('Access');
    await page.getByRole('button', { name: 'Manage acme' }).click();
    await page.getByText('Issue a key').click();
    await page.getByLabel('Key id (optional; generated when empty)').fill('browser-key');
    await page.getByRole('group', { name: /Aliases/ }).getByLabel('chat').check();
    await page.getByRole('button', { name: 'Issue key' }).click();
    const secretField = page.getByRole('textbox', { name: 'Key secret' });
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^sk-sy-[0-9A-Za-z]{32}$/);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await expectAccessible('access-new-key');
    await screenshot(page, 'access-new-key');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await expect(secretField.count()).resolves.toBe(0);
    // The key's row: its prefix as the API gives it (one ellipsis), its scopes in a cell that is still a table
    // cell (chips laid out inside it, so the row's borders line up with its neighbours').
    const row = page.getByRole('row', { name: /browser-key/ });
    await expect(row.locator('code').textContent()).resolves.toBe(`${secret.slice(0, 10)}…`);
    await expect(row.getByRole('cell', { name: 'inference' }).evaluate((cell) => (globalThis as unknown as { getComputedStyle(element: unknown): { display: string } }).getComputedStyle(cell).display)).resolves.toBe('table-cell');

    const chat = async (text: string) => {
      await open('Playground');
      await page.getByLabel('API key').fill(secret);
      await page.getByLabel('Alias').selectOption('chat');
      await page.getByLabel('Message').fill(text);
      await page.getByRole('button', { name: 'Send' }).click();
    };
    await chat('Hello from the console playground');
    const outcome = page.getByTestId('playground-outcome');
    await outcome.getByText('done', { exact: true }).waitFor();
    await outcome.getByText(/^\$[0-9.]+$/).waitFor({ timeout: 10_000 });
    const requestId = (await outcome.getByRole('link').textContent())!;
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const tokens = await outcome.getByText(/^\d+ \/ \d+$/).textContent();
    const story = (await admin.get(`/requests/${requestId}`)).json;
    expect(story.status).toBe('success');
    expect(story.admission.keyId).toBe('browser-key');
    expect(tokens).toBe(`${story.attempts[0].usage.input} / ${story.attempts[0].usage.output}`);
    await expect(page.locator('.turn-assistant .turn-text').textContent()).resolves.not.toBe('…');
    await screenshot(page, 'playground');

    await open('Access');
    await page.getByRole('button', { name: 'Manage acme' }).click();
    await page.getByRole('button', { name: 'Revoke key browser-key' }).click();
    await page.getByText('Key browser-key revoked.').waitFor();
    const revoked = await admin.get('/keys/browser-key');
    expect(revoked.json.status).toBe('revoked');

    await chat('Hello again');
    await page.getByRole('alert').filter({ hasText: /^.*401/ }).waitFor();
    await expect(outcome.getByText('failed', { exact: true }).isVisible()).resolves.toBe(true);
    // The revocation is an event with the console's actor on it.
    const events = (await admin.get('/events?stream=apikey-browser-key')).json.data;
    expect(events.map((e: { type: string }) => e.type)).toEqual(['ApiKeyIssued', 'ApiKeyRevoked']);
    expect(events[1].metadata.actor).toMatch(/^console:/);
  });

  test('an alias edited on the Catalog page shows its dry-run diff, appends nothing until applied, then publishes', async () => {
    await open('Catalog');
    await page.getByRole('button', { name: 'Edit alias chat' }).click();
    await page.getByLabel('Strategy').selectOption('weighted');
    await page.getByLabel('Route 2 weight').fill('3');
    await page.getByRole('button', { name: 'Preview changes' }).click();
    const diff = page.locator('table.diff');
    await diff.waitFor();
    await expect(diff.getByRole('row', { name: /routes\[1\]\.weight\s+1\s+3/ }).count()).resolves.toBe(1);
    await expect(diff.getByRole('row', { name: /strategy\s+priority\s+weighted/ }).count()).resolves.toBe(1);
    await page.getByText('Would append AliasPublished — chat v2').waitFor();
    await page.getByRole('heading', { name: 'Aliases' }).scrollIntoViewIfNeeded();
    await expectAccessible('catalog-alias-dry-run');
    await screenshot(page, 'catalog-alias-dry-run');
    expect((await admin.get('/aliases/chat')).json.aliasVersion).toBe(1);

    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Published chat v2.').waitFor();
    const alias = (await admin.get('/aliases/chat')).json;
    expect(alias).toMatchObject({ aliasVersion: 2, strategy: 'weighted' });
    expect(alias.routes[1]).toMatchObject({ deployment: 'backup', weight: 3 });
    const published = (await admin.get('/events?stream=alias-chat')).json.data.at(-1);
    expect(published.metadata.actor).toMatch(/^console:/);
  });

  test('the audit page verifies the chain and says so', async () => {
    await open('Audit');
    await waitUntil(async () => (await admin.post('/audit/verify', {})).json.pendingEvents === 0, 10_000, 'the audit chain to catch up');
    await page.getByRole('button', { name: 'Verify the whole chain' }).click();
    const verdict = page.getByTestId('audit-verdict');
    await verdict.getByText('The chain is intact').waitFor();
    await verdict.getByText('the whole chain').waitFor();
    await expectAccessible('audit-verified');
    await expect(verdict.getByText(/Events verified/).isVisible()).resolves.toBe(true);
    // Since the last checkpoint: the request says so (without a signed checkpoint yet, the server verifies the whole chain).
    const sent = page.waitForRequest((request) => request.url().endsWith('/admin/v1/audit/verify') && request.postData()?.includes('latest-checkpoint') === true);
    await page.getByRole('button', { name: 'Verify since the last checkpoint' }).click();
    await sent;
    await verdict.getByText('The chain is intact').waitFor();
    await screenshot(page, 'audit');
  });

  test('signing out ends the session on the server', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    const session = await page.evaluate(`fetch('/console/api/session', { credentials: 'same-origin' }).then((r) => r.status)`);
    expect(session).toBe(401);
  });
});
