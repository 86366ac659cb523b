import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Reflector } from '@nestjs/core';
import { type AdminAccess, type AdminAreaMark, type ConsoleRole, CONSOLE_ROLES, accessOf, adminAreaOf, adminTokenOnly, rolesAllowed } from '../../modules/admin/index.js';
import { ConsoleSessions } from '../../modules/console/console-sessions.js';
import { ConsoleBrowser, type ConsoleResponse } from '../support/console-browser.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { registeredRoutes } from '../support/registered-routes.js';

/**
 * Issue 38: console roles are enforced by the server on every admin route. Every route Nest registers
 * under /admin is found here (routes added later included), and each must carry an area; then, for each:
 * no session → 401; a session whose role the matrix does not allow → 403 `role_forbidden`; a change
 * without the CSRF token → 403 `csrf_token_required`; every allowed role gets past the guard (for a
 * change with an empty body, a validation error or a 404 of a resource that does not exist proves it).
 * Path parameters name nothing that exists, so no allowed request changes anything.
 */
const ADMIN_TOKEN = 'console-roles-admin-token-0123456789';
const GUARD_CODES = ['unauthorized', 'session_required', 'role_forbidden', 'csrf_token_required', 'platform_scope_required', 'admin_token_required'];

interface Route {
  method: string;
  /** As registered, e.g. /admin/v1/keys/:id */
  pattern: string;
  /** With every parameter naming nothing that exists. */
  url: string;
  mark: AdminAreaMark | undefined;
  access: AdminAccess;
  allowed: ConsoleRole[];
}

let gw: TestGateway;
let routes: Route[];
const sessions = new Map<ConsoleRole, ConsoleBrowser>();
const browsers: ConsoleBrowser[] = [];

beforeAll(async () => {
  gw = await startTestGateway({ environment: { adminToken: ADMIN_TOKEN } });
  const reflector = gw.gateway.app.get(Reflector);
  routes = [];
  for (const { method, pattern, handler, controller } of registeredRoutes(gw.gateway.app)) {
    if (!pattern.startsWith('/admin/')) continue;
    const mark = adminAreaOf(reflector, handler, controller);
    const access = accessOf(method, mark);
    routes.push({
      method, pattern, mark, access,
      url: pattern.replace(/:(\w+)/g, (_match, param: string) => `no-such-${param}-7f3a`),
      allowed: rolesAllowed(mark, access, adminTokenOnly(reflector, handler, controller)),
    });
  }
  // Sessions of every role, opened the way sign-in opens them (a console user per role).
  for (const role of CONSOLE_ROLES) {
    const opened = await gw.gateway.app.get(ConsoleSessions).open(`${role}-user@example.com`, role, 'oidc');
    const browser = new ConsoleBrowser(gw.url);
    browser.cookies.set('switchyard_console', opened.cookieValue);
    browser.csrfToken = opened.session.csrfToken;
    sessions.set(role, browser);
    browsers.push(browser);
  }
}, 60_000);

afterAll(async () => {
  for (const browser of browsers) await browser.close();
  await gw?.close();
});

function call(browser: ConsoleBrowser, route: Route, options: { csrf?: boolean } = {}): Promise<ConsoleResponse> {
  if (route.method === 'GET' || route.method === 'HEAD') return browser.get(route.url);
  return browser.change(route.method, route.url, {}, options);
}

const describeRoute = (route: Route) => `${route.method} ${route.pattern}`;

describe('every admin route has an area', () => {
  test('found them all, and none lacks an area (an unmarked route would be the admin role\'s alone)', () => {
    expect(routes.length).toBeGreaterThanOrEqual(48);
    expect(routes.filter((route) => route.mark === undefined).map(describeRoute)).toEqual([]);
  });

  test('no viewer, finance or auditor session may change anything; reads the contract names are theirs', () => {
    const changers = routes.filter((route) => route.access === 'change').flatMap((route) => route.allowed.filter((role) => ['viewer', 'finance', 'auditor'].includes(role)));
    expect(changers).toEqual([]);
    const allowed = (method: string, pattern: string) => routes.find((route) => route.method === method && route.pattern === pattern)!.allowed;
    expect(allowed('GET', '/admin/v1/analytics/spend')).toEqual(['admin', 'operator', 'finance', 'viewer']);
    expect(allowed('GET', '/admin/v1/events')).toEqual(['admin', 'operator', 'auditor', 'viewer']);
    // Audit verification is a POST that changes nothing: the auditor's.
    expect(allowed('POST', '/admin/v1/audit/verify')).toEqual(['admin', 'operator', 'auditor', 'viewer']);
    expect(allowed('GET', '/admin/v1/status')).toEqual(['admin', 'operator', 'finance', 'auditor', 'viewer']);
    // Provider credentials and base URLs, and applying a configuration: the admin role only.
    expect(allowed('POST', '/admin/v1/providers')).toEqual(['admin']);
    expect(allowed('PUT', '/admin/v1/providers/:id')).toEqual(['admin']);
    expect(allowed('POST', '/admin/v1/config/apply')).toEqual(['admin']);
    expect(allowed('PUT', '/admin/v1/aliases/:name')).toEqual(['admin', 'operator']);
    expect(allowed('PUT', '/admin/v1/tenants/:id/budget')).toEqual(['admin', 'operator']);
    expect(allowed('DELETE', '/admin/v1/cache')).toEqual(['admin', 'operator']);
    expect(allowed('POST', '/admin/v1/projections/:name/rebuild')).toEqual(['admin']);
  });

  test('docs/openapi.json states each admin operation\'s area and the console roles that may call it', () => {
    const openapi = JSON.parse(readFileSync(fileURLToPath(new URL('../../../docs/openapi.json', import.meta.url)), 'utf8'));
    const documented = (route: Route) => openapi.paths[route.pattern.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()];
    const stated = Object.fromEntries(routes.map((route) => [describeRoute(route), { area: documented(route)?.['x-switchyard-console-area'], roles: documented(route)?.['x-switchyard-console-roles'] }]));
    const enforced = Object.fromEntries(routes.map((route) => [describeRoute(route), { area: route.mark?.area, roles: route.allowed }]));
    expect(stated).toEqual(enforced);
  });
});

describe('each route, called with a session', () => {
  test('without any session: 401', async () => {
    const anonymous = new ConsoleBrowser(gw.url);
    browsers.push(anonymous);
    const failures: string[] = [];
    for (const route of routes) {
      const response = await call(anonymous, route);
      if (response.status !== 401) failures.push(`${describeRoute(route)} → ${response.status}`);
    }
    expect(failures).toEqual([]);
  });

  test('a change without the CSRF token: 403 csrf_token_required, even for the admin role', async () => {
    const failures: string[] = [];
    for (const route of routes.filter((each) => each.method !== 'GET')) {
      const response = await call(sessions.get('admin')!, route, { csrf: false });
      if (response.status !== 403 || response.json?.error?.code !== 'csrf_token_required') failures.push(`${describeRoute(route)} → ${response.status} ${response.text.slice(0, 120)}`);
    }
    expect(failures).toEqual([]);
  });

  test.each(CONSOLE_ROLES.map((role) => [role]))('role %s: refused with 403 role_forbidden where the matrix says no, past the guard where it says yes', async (role) => {
    const browser = sessions.get(role as ConsoleRole)!;
    const failures: string[] = [];
    for (const route of routes) {
      const response = await call(browser, route);
      const code = response.json?.error?.code;
      if (route.allowed.includes(role as ConsoleRole)) {
        if (response.status === 401 || GUARD_CODES.includes(code)) failures.push(`${describeRoute(route)} should pass: ${response.status} ${code}`);
      } else if (response.status !== 403 || code !== 'role_forbidden' || !response.json.error.message.includes(route.allowed.join(' or '))) {
        failures.push(`${describeRoute(route)} should be refused: ${response.status} ${response.text.slice(0, 160)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  test('the admin token still passes everywhere without a CSRF token, with or without a session cookie of a weaker role', async () => {
    const viewer = sessions.get('viewer')!;
    const failures: string[] = [];
    for (const route of routes) {
      const response = route.method === 'GET'
        ? await viewer.get(route.url, { authorization: `Bearer ${ADMIN_TOKEN}` })
        : await viewer.change(route.method, route.url, {}, { csrf: false, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      const code = response.json?.error?.code;
      if (response.status === 401 || GUARD_CODES.includes(code)) failures.push(`${describeRoute(route)} → ${response.status} ${code}`);
    }
    expect(failures).toEqual([]);
  });
});
