import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Reflector } from '@nestjs/core';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { adminTokenOnly, tenantAccessOf } from '../../modules/admin/admin.guard.js';
import { EventHistory } from '../../modules/audit/event-history.js';
import { type AdminResponse, AdminClient } from '../support/admin-client.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';
import { createScratchDatabase } from '../support/services.js';
import { openApiPath, registeredRoutes } from '../support/registered-routes.js';

/**
 * Issue 32, item 7: tenant-scoped administration. A key with `admin` administers its own tenant only; the
 * admin token and keys with `admin:platform` administer the platform. Every admin route is in the table
 * below (a route the table does not cover fails the first test), and each is called, unhappy paths first,
 * (c) by tenant A's admin key on tenant B's resources — 404 exactly as for a resource that does not exist,
 * with nothing appended to the log — or (d) on a platform operation — 403, nothing appended —, then (b) by
 * tenant A's admin key on its own tenant and (a) by the admin token (and, for reads, a platform key).
 */
const ADMIN_TOKEN = 'tenant-scope-admin-token-0123456789';
const databaseUrl = process.env.DATABASE_URL ?? null;

const keyEnv = (name: string) => `SY_TEST_SCOPE_${name}_${process.pid}_KEY`;
const SECRETS = { acmeAdmin: keyEnv('ACME_ADMIN'), globexApp: keyEnv('GLOBEX_APP'), globexAdmin: keyEnv('GLOBEX_ADMIN'), platform: keyEnv('PLATFORM') };
const AUDIT_KEY_ENV = keyEnv('AUDIT');

const yaml = (mockUrl: string, acmeAppEnv: string) => `
providers:
  - id: mock-upstream
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true
    apiKey: env:SY_TEST_UPSTREAM_KEY
deployments:
  - id: primary
    provider: mock-upstream
    model: model-primary
    capabilities: [chat, streaming]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "2.50", outputPer1M: "10.00" }
aliases:
  - name: chat
    routes: [{ deployment: primary }]
  - name: solo
    routes: [{ deployment: primary }]
tenants:
  - id: acme
  - id: globex
  - id: ops
apiKeys:
  - { id: acme-app, tenant: acme, key: env:${acmeAppEnv}, scopes: [inference, models:read] }
  - { id: acme-admin, tenant: acme, key: env:${SECRETS.acmeAdmin}, scopes: [admin, inference, models:read] }
  - { id: globex-app, tenant: globex, key: env:${SECRETS.globexApp}, scopes: [inference, models:read] }
  - { id: globex-admin, tenant: globex, key: env:${SECRETS.globexAdmin}, scopes: [admin] }
  - { id: ops-platform, tenant: ops, key: env:${SECRETS.platform}, scopes: ["admin:platform"] }
`;

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Access = 'tenant' | 'platform-on-tenant' | 'platform' | 'admin-token';

interface Call {
  method: Method;
  path: string;
  body?: unknown;
}

interface Expectation {
  call: Call;
  status: number;
  check?: (response: AdminResponse) => void | Promise<void>;
}

/** Tenant A's admin on tenant B's resource, and on one that does not exist: both 404 with `code`, indistinguishable. */
interface Foreign {
  call: Call;
  missing: Call;
  /** The id in `call` and the id in `missing`, so the two messages can be compared. */
  ids: [string, string];
  code: string;
}

interface RouteCase {
  /** As Nest registers it, e.g. `GET /admin/v1/tenants/{id}`. */
  route: string;
  access: Access;
  /** tenant, platform-on-tenant: another tenant's resource is 404. */
  foreign?: Foreign[];
  /** tenant routes that filter: asked about tenant B, tenant A's admin gets nothing of it. */
  foreignFiltered?: Expectation[];
  /** platform, admin-token: tenant A's admin is refused (403) with nothing appended. */
  refused?: Call;
  /** tenant: what tenant A's admin gets on its own tenant; platform-on-tenant: its own tenant is 403. */
  own?: Expectation;
  token: Expectation;
}

let gw: TestGateway;
let scratch: { url: string; drop: () => Promise<void> } | null = null;
let admin: AdminClient;
let acmeAdmin: AdminClient;
let globexAdmin: AdminClient;
let platformKey: AdminClient;
const secrets: Record<keyof typeof SECRETS, string> = { acmeAdmin: '', globexApp: '', globexAdmin: '', platform: '' };
let acmeRequest: string;
let globexRequest: string;
const missingRequest = randomUUID();
const acmeCached = { model: 'chat', messages: [{ role: 'user', content: `cached for acme ${process.pid}` }] };
const globexCached = { model: 'chat', messages: [{ role: 'user', content: `cached for globex ${process.pid}` }] };

const day = (offset: number) => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + offset)).toISOString();
};
const spendRange = () => `from=${encodeURIComponent(day(0))}&to=${encodeURIComponent(day(1))}`;

function send(client: AdminClient, call: Call): Promise<AdminResponse> {
  const path = call.path.replace(/^\/admin\/v1/, '');
  return client.send(call.method, path, call.body ?? (call.method === 'GET' || call.method === 'DELETE' ? undefined : {}));
}

async function logSize(): Promise<string> {
  const rows = await gw.gateway.platform.database.query<{ n: string; head: string | null }>(`SELECT count(*)::text AS n, max(global_position)::text AS head FROM events`);
  return `${rows[0].n}@${rows[0].head}`;
}

/** Runs `work` and asserts the event log did not grow. */
async function appendsNothing(work: () => Promise<AdminResponse>): Promise<AdminResponse> {
  const before = await logSize();
  const response = await work();
  await gw.gateway.platform.committer.drain();
  expect(await logSize()).toBe(before);
  return response;
}

function chat(key: string, body: unknown) {
  return postJson(gw, '/v1/chat/completions', body, { authorization: `Bearer ${key}` });
}

/** Every event's stream is about acme: its tenant stream, an acme key's stream, or one of acme's requests. */
function onlyAboutAcme(events: Array<{ streamId: string }>, acmeRequests: ReadonlySet<string>): void {
  for (const event of events) {
    const about = event.streamId === 'tenant-acme' || /^apikey-acme-/.test(event.streamId) || acmeRequests.has(event.streamId);
    expect({ stream: event.streamId, about }).toEqual({ stream: event.streamId, about: true });
  }
}

async function acmeRequestStreams(): Promise<Set<string>> {
  const rows = await gw.gateway.platform.database.query<{ stream_id: string }>(
    `SELECT DISTINCT stream_id FROM events WHERE starts_with(stream_id, 'request-') AND metadata->>'actor' LIKE 'key:acme-%'`,
  );
  return new Set(rows.map((row) => row.stream_id));
}

const get = (path: string): Call => ({ method: 'GET', path });

/** The route table: one entry per admin route, in the order the tests run (a resource is made before it is changed). */
const cases: RouteCase[] = [
  // Content policies: the platform's (a tenant admin neither reads nor changes what protects its data).
  {
    route: 'PUT /admin/v1/content-policies/{id}', access: 'platform',
    refused: { method: 'PUT', path: '/admin/v1/content-policies/made-by-a-tenant', body: { input: { email: 'mask' } } },
    token: { call: { method: 'PUT', path: '/admin/v1/content-policies/scope-policy', body: { input: { email: 'mask' } } }, status: 201 },
  },
  { route: 'GET /admin/v1/content-policies', access: 'platform', refused: get('/admin/v1/content-policies'), token: { call: get('/admin/v1/content-policies'), status: 200 } },
  {
    route: 'GET /admin/v1/content-policies/{id}', access: 'platform', refused: get('/admin/v1/content-policies/scope-policy'),
    token: { call: get('/admin/v1/content-policies/scope-policy'), status: 200 },
  },
  // Tenants: reads are confined, changes are the platform's.
  {
    route: 'GET /admin/v1/tenants', access: 'tenant',
    own: { call: get('/admin/v1/tenants'), status: 200, check: (r) => expect(r.json.data.map((t: { id: string }) => t.id)).toEqual(['acme']) },
    token: { call: get('/admin/v1/tenants'), status: 200, check: (r) => expect(r.json.data.map((t: { id: string }) => t.id).sort()).toEqual(['acme', 'globex', 'ops']) },
  },
  {
    route: 'GET /admin/v1/tenants/{id}', access: 'tenant',
    foreign: [{ call: get('/admin/v1/tenants/globex'), missing: get('/admin/v1/tenants/no-such-tenant'), ids: ['globex', 'no-such-tenant'], code: 'tenant_not_found' }],
    own: { call: get('/admin/v1/tenants/acme'), status: 200, check: (r) => expect(r.json).toMatchObject({ id: 'acme', status: 'active' }) },
    token: { call: get('/admin/v1/tenants/globex'), status: 200, check: (r) => expect(r.json).toMatchObject({ id: 'globex' }) },
  },
  {
    route: 'GET /admin/v1/tenants/{id}/spend', access: 'tenant',
    foreign: [{ call: get('/admin/v1/tenants/globex/spend'), missing: get('/admin/v1/tenants/no-such-tenant/spend'), ids: ['globex', 'no-such-tenant'], code: 'tenant_not_found' }],
    own: { call: get('/admin/v1/tenants/acme/spend?period=day'), status: 200, check: (r) => {
      expect(r.json.tenant).toBe('acme');
      expect(r.json.data.length).toBe(1);
    } },
    token: { call: get('/admin/v1/tenants/globex/spend?period=day'), status: 200, check: (r) => expect(r.json.data.length).toBe(1) },
  },
  {
    route: 'POST /admin/v1/tenants', access: 'platform',
    refused: { method: 'POST', path: '/admin/v1/tenants', body: { id: 'made-by-a-tenant' } },
    token: { call: { method: 'POST', path: '/admin/v1/tenants', body: { id: 'initech' } }, status: 201 },
  },
  ...(['limits', 'budget'] as const).map((what): RouteCase => {
    const body = what === 'limits' ? { rpm: 100 } : { monthlyUsd: '100' };
    return {
      route: `PUT /admin/v1/tenants/{id}/${what}`, access: 'platform-on-tenant',
      foreign: [{
        call: { method: 'PUT', path: `/admin/v1/tenants/globex/${what}`, body },
        missing: { method: 'PUT', path: `/admin/v1/tenants/no-such-tenant/${what}`, body }, ids: ['globex', 'no-such-tenant'], code: 'tenant_not_found',
      }],
      own: { call: { method: 'PUT', path: `/admin/v1/tenants/acme/${what}`, body }, status: 403 },
      token: { call: { method: 'PUT', path: `/admin/v1/tenants/initech/${what}`, body }, status: 200 },
    };
  }),
  {
    route: 'DELETE /admin/v1/tenants/{id}/budget', access: 'platform-on-tenant',
    foreign: [{
      call: { method: 'DELETE', path: '/admin/v1/tenants/globex/budget' }, missing: { method: 'DELETE', path: '/admin/v1/tenants/no-such-tenant/budget' },
      ids: ['globex', 'no-such-tenant'], code: 'tenant_not_found',
    }],
    own: { call: { method: 'DELETE', path: '/admin/v1/tenants/acme/budget' }, status: 403 },
    token: { call: { method: 'DELETE', path: '/admin/v1/tenants/initech/budget' }, status: 200 },
  },
  {
    route: 'PUT /admin/v1/tenants/{id}/content-policy', access: 'platform-on-tenant',
    foreign: [{
      call: { method: 'PUT', path: '/admin/v1/tenants/globex/content-policy', body: { contentPolicy: 'scope-policy' } },
      missing: { method: 'PUT', path: '/admin/v1/tenants/no-such-tenant/content-policy', body: { contentPolicy: 'scope-policy' } }, ids: ['globex', 'no-such-tenant'], code: 'tenant_not_found',
    }],
    own: { call: { method: 'PUT', path: '/admin/v1/tenants/acme/content-policy', body: { contentPolicy: 'scope-policy' } }, status: 403 },
    token: {
      call: { method: 'PUT', path: '/admin/v1/tenants/initech/content-policy', body: { contentPolicy: 'scope-policy' } }, status: 200,
      check: (r) => expect(r.json.contentPolicy).toBe('scope-policy'),
    },
  },
  {
    route: 'DELETE /admin/v1/tenants/{id}/content-policy', access: 'platform-on-tenant',
    foreign: [{
      call: { method: 'DELETE', path: '/admin/v1/tenants/globex/content-policy' }, missing: { method: 'DELETE', path: '/admin/v1/tenants/no-such-tenant/content-policy' },
      ids: ['globex', 'no-such-tenant'], code: 'tenant_not_found',
    }],
    own: { call: { method: 'DELETE', path: '/admin/v1/tenants/acme/content-policy' }, status: 403 },
    token: { call: { method: 'DELETE', path: '/admin/v1/tenants/initech/content-policy' }, status: 200, check: (r) => expect(r.json.contentPolicy).toBeNull() },
  },
  {
    route: 'DELETE /admin/v1/content-policies/{id}', access: 'platform', refused: { method: 'DELETE', path: '/admin/v1/content-policies/scope-policy' },
    token: { call: { method: 'DELETE', path: '/admin/v1/content-policies/scope-policy' }, status: 200, check: (r) => expect(r.json.status).toBe('retired') },
  },
  ...(['suspend', 'reinstate'] as const).map((what): RouteCase => ({
    route: `POST /admin/v1/tenants/{id}/${what}`, access: 'platform-on-tenant',
    foreign: [{
      call: { method: 'POST', path: `/admin/v1/tenants/globex/${what}` }, missing: { method: 'POST', path: `/admin/v1/tenants/no-such-tenant/${what}` },
      ids: ['globex', 'no-such-tenant'], code: 'tenant_not_found',
    }],
    own: { call: { method: 'POST', path: `/admin/v1/tenants/acme/${what}` }, status: 403 },
    token: { call: { method: 'POST', path: `/admin/v1/tenants/initech/${what}` }, status: 200, check: (r) => expect(r.json.status).toBe(what === 'suspend' ? 'suspended' : 'active') },
  })),

  // Keys: the tenant's own, and none stronger than the caller.
  {
    route: 'GET /admin/v1/keys', access: 'tenant',
    foreign: [{ call: get('/admin/v1/keys?tenant=globex'), missing: get('/admin/v1/keys?tenant=no-such-tenant'), ids: ['globex', 'no-such-tenant'], code: 'tenant_not_found' }],
    own: { call: get('/admin/v1/keys'), status: 200, check: (r) => {
      expect(new Set(r.json.data.map((k: { tenant: string }) => k.tenant))).toEqual(new Set(['acme']));
      expect(r.json.data.map((k: { id: string }) => k.id)).toEqual(expect.arrayContaining(['acme-app', 'acme-admin']));
    } },
    token: { call: get('/admin/v1/keys'), status: 200, check: (r) => expect(r.json.data.map((k: { id: string }) => k.id)).toEqual(expect.arrayContaining(['acme-app', 'globex-app', 'ops-platform'])) },
  },
  {
    route: 'POST /admin/v1/keys', access: 'tenant',
    foreign: [{
      call: { method: 'POST', path: '/admin/v1/keys', body: { id: 'acme-sneaky', tenant: 'globex', scopes: ['inference'] } },
      missing: { method: 'POST', path: '/admin/v1/keys', body: { id: 'acme-sneaky', tenant: 'no-such-tenant', scopes: ['inference'] } },
      ids: ['globex', 'no-such-tenant'], code: 'tenant_not_found',
    }],
    own: { call: { method: 'POST', path: '/admin/v1/keys', body: { id: 'acme-temp', tenant: 'acme', scopes: ['inference'] } }, status: 201, check: async (r) => {
      expect(r.json).toMatchObject({ id: 'acme-temp', tenant: 'acme', scopes: ['inference'] });
      expect((await chat(r.json.key, { model: 'solo', messages: [{ role: 'user', content: 'a key a tenant admin issued' }] })).status).toBe(200);
    } },
    token: { call: { method: 'POST', path: '/admin/v1/keys', body: { id: 'globex-temp', tenant: 'globex', scopes: ['inference'] } }, status: 201 },
  },
  {
    route: 'GET /admin/v1/keys/{id}', access: 'tenant',
    foreign: [{ call: get('/admin/v1/keys/globex-app'), missing: get('/admin/v1/keys/no-such-key'), ids: ['globex-app', 'no-such-key'], code: 'key_not_found' }],
    own: { call: get('/admin/v1/keys/acme-app'), status: 200, check: (r) => expect(r.json).toMatchObject({ id: 'acme-app', tenant: 'acme' }) },
    token: { call: get('/admin/v1/keys/globex-app'), status: 200 },
  },
  {
    route: 'PATCH /admin/v1/keys/{id}', access: 'tenant',
    foreign: [{
      call: { method: 'PATCH', path: '/admin/v1/keys/globex-app', body: { limits: { rpm: 7 } } },
      missing: { method: 'PATCH', path: '/admin/v1/keys/no-such-key', body: { limits: { rpm: 7 } } }, ids: ['globex-app', 'no-such-key'], code: 'key_not_found',
    }],
    own: { call: { method: 'PATCH', path: '/admin/v1/keys/acme-temp', body: { limits: { rpm: 50 } } }, status: 200, check: (r) => expect(r.json.appended).toEqual(['ApiKeyUpdated']) },
    token: { call: { method: 'PATCH', path: '/admin/v1/keys/globex-temp', body: { limits: { rpm: 50 } } }, status: 200 },
  },
  {
    route: 'POST /admin/v1/keys/{id}/rotate', access: 'tenant',
    foreign: [{
      call: { method: 'POST', path: '/admin/v1/keys/globex-app/rotate' }, missing: { method: 'POST', path: '/admin/v1/keys/no-such-key/rotate' },
      ids: ['globex-app', 'no-such-key'], code: 'key_not_found',
    }],
    own: { call: { method: 'POST', path: '/admin/v1/keys/acme-temp/rotate' }, status: 200, check: (r) => expect(r.json.key).toMatch(/^sk-sy-/) },
    token: { call: { method: 'POST', path: '/admin/v1/keys/globex-temp/rotate' }, status: 200 },
  },
  {
    route: 'GET /admin/v1/keys/{id}/spend', access: 'tenant',
    foreign: [{ call: get('/admin/v1/keys/globex-app/spend'), missing: get('/admin/v1/keys/no-such-key/spend'), ids: ['globex-app', 'no-such-key'], code: 'key_not_found' }],
    own: { call: get('/admin/v1/keys/acme-app/spend?period=day'), status: 200, check: (r) => expect(r.json.data.length).toBe(1) },
    token: { call: get('/admin/v1/keys/globex-app/spend?period=day'), status: 200, check: (r) => expect(r.json.data.length).toBe(1) },
  },
  {
    route: 'POST /admin/v1/keys/{id}/revoke', access: 'tenant',
    foreign: [{
      call: { method: 'POST', path: '/admin/v1/keys/globex-app/revoke' }, missing: { method: 'POST', path: '/admin/v1/keys/no-such-key/revoke' },
      ids: ['globex-app', 'no-such-key'], code: 'key_not_found',
    }],
    own: { call: { method: 'POST', path: '/admin/v1/keys/acme-temp/revoke' }, status: 200, check: (r) => expect(r.json.status).toBe('revoked') },
    token: { call: { method: 'POST', path: '/admin/v1/keys/globex-temp/revoke' }, status: 200 },
  },

  // History: only what is about the tenant.
  {
    route: 'GET /admin/v1/requests/{id}', access: 'tenant',
    foreign: [{ call: get('/admin/v1/requests/{globex}'), missing: get(`/admin/v1/requests/${missingRequest}`), ids: ['{globex}', missingRequest], code: 'request_not_found' }],
    own: { call: get('/admin/v1/requests/{acme}'), status: 200, check: (r) => expect(r.json.admission).toMatchObject({ tenantId: 'acme' }) },
    token: { call: get('/admin/v1/requests/{globex}'), status: 200, check: (r) => expect(r.json.admission).toMatchObject({ tenantId: 'globex' }) },
  },
  {
    route: 'GET /admin/v1/requests', access: 'tenant',
    foreign: [{ call: get('/admin/v1/requests?tenant=globex'), missing: get('/admin/v1/requests?tenant=no-such-tenant'), ids: ['globex', 'no-such-tenant'], code: 'tenant_not_found' }],
    foreignFiltered: [
      { call: get('/admin/v1/requests?key=globex-app'), status: 200, check: (r) => expect(r.json).toEqual({ requests: [], nextPageToken: null }) },
    ],
    own: { call: get('/admin/v1/requests?limit=200'), status: 200, check: (r) => {
      expect(r.text).not.toContain('globex');
      expect(r.json.requests.map((q: { requestId: string }) => q.requestId)).toContain(acmeRequest);
      expect(new Set(r.json.requests.map((q: { tenantId: string }) => q.tenantId))).toEqual(new Set(['acme']));
    } },
    token: { call: get('/admin/v1/requests?tenant=globex'), status: 200, check: (r) => {
      expect(r.json.requests.map((q: { requestId: string }) => q.requestId)).toContain(globexRequest);
    } },
  },
  {
    route: 'GET /admin/v1/events', access: 'tenant',
    foreignFiltered: [
      { call: get('/admin/v1/events?stream={globex-stream}'), status: 200, check: (r) => expect(r.json).toEqual({ data: [], next: expect.any(String), caughtUp: true }) },
      { call: get('/admin/v1/events?stream=tenant-globex'), status: 200, check: (r) => expect(r.json.data).toEqual([]) },
      { call: get('/admin/v1/events?stream=apikey-globex-app'), status: 200, check: (r) => expect(r.json.data).toEqual([]) },
    ],
    own: { call: get('/admin/v1/events?limit=1000'), status: 200, check: async (r) => {
      expect(r.json.caughtUp).toBe(true);
      expect(r.text).not.toContain('globex');
      const streams = new Set(r.json.data.map((e: { streamId: string }) => e.streamId));
      expect([...streams]).toEqual(expect.arrayContaining(['tenant-acme', 'apikey-acme-app', 'apikey-acme-admin', `request-${acmeRequest}`]));
      onlyAboutAcme(r.json.data, await acmeRequestStreams());
    } },
    token: { call: get('/admin/v1/events?limit=1000'), status: 200, check: (r) => {
      const streams = r.json.data.map((e: { streamId: string }) => e.streamId);
      expect(streams).toEqual(expect.arrayContaining(['tenant-globex', `request-${globexRequest}`, 'alias-chat']));
    } },
  },
  {
    route: 'GET /admin/v1/audit', access: 'tenant',
    foreignFiltered: [
      { call: get('/admin/v1/audit?action=TenantCreated'), status: 200, check: (r) => expect(r.json.data.map((e: { stream: string }) => e.stream)).toEqual(['tenant-acme']) },
      { call: get('/admin/v1/audit?action=ApiKeyIssued'), status: 200, check: (r) => {
        expect(r.text).not.toContain('globex');
        expect(r.json.data.map((e: { stream: string }) => e.stream)).toEqual(expect.arrayContaining(['apikey-acme-app', 'apikey-acme-admin']));
      } },
    ],
    own: { call: get('/admin/v1/audit'), status: 200, check: (r) => {
      expect(r.text).not.toContain('globex');
      for (const entry of r.json.data) expect(entry.stream).toMatch(/^(tenant-acme|apikey-acme-.+)$/);
    } },
    token: { call: get('/admin/v1/audit?action=TenantCreated'), status: 200, check: (r) => expect(r.json.data.map((e: { stream: string }) => e.stream)).toEqual(expect.arrayContaining(['tenant-acme', 'tenant-globex'])) },
  },

  // Analytics: the tenant's own spend; reconciliation is the platform's.
  {
    route: 'GET /admin/v1/analytics/spend', access: 'tenant',
    foreign: [{
      call: get(`/admin/v1/analytics/spend?{range}&tenant=globex`), missing: get(`/admin/v1/analytics/spend?{range}&tenant=no-such-tenant`),
      ids: ['globex', 'no-such-tenant'], code: 'tenant_not_found',
    }],
    own: { call: get('/admin/v1/analytics/spend?{range}&groupBy=tenant,key'), status: 200, check: (r) => {
      expect(r.json.rows.length).toBeGreaterThan(0);
      expect(new Set(r.json.rows.map((row: { tenant: string }) => row.tenant))).toEqual(new Set(['acme']));
      expect(r.json.filters).toEqual({ tenant: 'acme' });
      expect(r.text).not.toContain('globex');
    } },
    token: { call: get('/admin/v1/analytics/spend?{range}&groupBy=tenant'), status: 200, check: (r) => expect(r.json.rows.map((row: { tenant: string }) => row.tenant).sort()).toEqual(['acme', 'globex']) },
  },
  {
    route: 'GET /admin/v1/analytics/ledger-usage', access: 'platform',
    refused: get(`/admin/v1/analytics/ledger-usage?providerType=openai&from=${day(0).slice(0, 10)}&to=${day(0).slice(0, 10)}`),
    token: { call: get(`/admin/v1/analytics/ledger-usage?providerType=openai&from=${day(0).slice(0, 10)}&to=${day(0).slice(0, 10)}`), status: 200 },
  },

  // The exact cache: a tenant admin purges its own tenant's entries.
  {
    route: 'DELETE /admin/v1/cache', access: 'tenant',
    foreign: [{
      call: { method: 'DELETE', path: '/admin/v1/cache?tenant=globex' }, missing: { method: 'DELETE', path: '/admin/v1/cache?tenant=no-such-tenant' },
      ids: ['globex', 'no-such-tenant'], code: 'tenant_not_found',
    }],
    own: { call: { method: 'DELETE', path: '/admin/v1/cache' }, status: 200, check: async (r) => {
      expect(r.json).toMatchObject({ filter: { tenant: 'acme', alias: null } });
      expect(r.json.purged).toBeGreaterThanOrEqual(1);
      // Tenant B's entry survived the purge; tenant A's did not.
      expect((await chat(secrets.globexApp, globexCached)).headers.get('x-switchyard-cache')).toBe('hit');
      expect((await chat(gw.key, acmeCached)).headers.get('x-switchyard-cache')).toBe('miss');
    } },
    token: { call: { method: 'DELETE', path: '/admin/v1/cache' }, status: 200, check: (r) => expect(r.json.filter.tenant).toBeNull() },
  },

  // The catalog is the platform's.
  { route: 'GET /admin/v1/providers', access: 'platform', refused: get('/admin/v1/providers'), token: { call: get('/admin/v1/providers'), status: 200 } },
  ...((): RouteCase[] => {
    const provider = { type: 'openai-compatible', baseUrl: 'https://llm.example.com/v1', apiKey: 'env:SY_TEST_UPSTREAM_KEY' };
    const register: Call = { method: 'POST', path: '/admin/v1/providers', body: { id: 'spare-upstream', ...provider } };
    const update: Call = { method: 'PUT', path: '/admin/v1/providers/spare-upstream', body: { ...provider, region: 'eu' } };
    const remove: Call = { method: 'DELETE', path: '/admin/v1/providers/spare-upstream' };
    return [
      { route: 'POST /admin/v1/providers', access: 'admin-token', refused: register, token: { call: register, status: 201 } },
      { route: 'GET /admin/v1/providers/{id}', access: 'platform', refused: get('/admin/v1/providers/spare-upstream'), token: { call: get('/admin/v1/providers/spare-upstream'), status: 200 } },
      { route: 'PUT /admin/v1/providers/{id}', access: 'admin-token', refused: update, token: { call: update, status: 200 } },
      { route: 'DELETE /admin/v1/providers/{id}', access: 'platform', refused: remove, token: { call: remove, status: 200 } },
    ];
  })(),
  ...((): RouteCase[] => {
    const settings = { provider: 'mock-upstream', model: 'model-spare', capabilities: ['chat'], contextWindow: 32000, maxOutputTokens: 2048 };
    const calls: Array<[string, Access, Call, number]> = [
      ['GET /admin/v1/deployments', 'platform', get('/admin/v1/deployments'), 200],
      ['POST /admin/v1/deployments', 'platform', { method: 'POST', path: '/admin/v1/deployments', body: { id: 'spare', ...settings } }, 201],
      ['GET /admin/v1/deployments/{id}', 'platform', get('/admin/v1/deployments/spare'), 200],
      ['PUT /admin/v1/deployments/{id}', 'platform', { method: 'PUT', path: '/admin/v1/deployments/spare', body: { ...settings, maxOutputTokens: 1024 } }, 200],
      ['POST /admin/v1/deployments/{id}/disable', 'platform', { method: 'POST', path: '/admin/v1/deployments/spare/disable' }, 200],
      ['POST /admin/v1/deployments/{id}/enable', 'platform', { method: 'POST', path: '/admin/v1/deployments/spare/enable' }, 200],
      ['GET /admin/v1/deployments/{id}/prices', 'platform', get('/admin/v1/deployments/spare/prices'), 200],
      ['POST /admin/v1/deployments/{id}/prices', 'platform', { method: 'POST', path: '/admin/v1/deployments/spare/prices', body: { inputPer1M: '1.00', outputPer1M: '2.00' } }, 201],
      ['POST /admin/v1/prices/import', 'platform', { method: 'POST', path: '/admin/v1/prices/import', body: { map: { 'model-spare': { input_cost_per_token: 1e-6, output_cost_per_token: 2e-6 } }, dryRun: true } }, 200],
      ['POST /admin/v1/deployments/{id}/retire', 'platform', { method: 'POST', path: '/admin/v1/deployments/spare/retire' }, 200],
      ['GET /admin/v1/aliases', 'platform', get('/admin/v1/aliases'), 200],
      ['PUT /admin/v1/aliases/{name}', 'platform', { method: 'PUT', path: '/admin/v1/aliases/spare-alias', body: { routes: [{ deployment: 'primary' }] } }, 201],
      ['GET /admin/v1/aliases/{name}', 'platform', get('/admin/v1/aliases/spare-alias'), 200],
      ['POST /admin/v1/aliases/{name}/retire', 'platform', { method: 'POST', path: '/admin/v1/aliases/spare-alias/retire' }, 200],
      ['POST /admin/v1/config/apply', 'admin-token', { method: 'POST', path: '/admin/v1/config/apply', body: { yaml: '{config}', dryRun: true } }, 200],
      ['GET /admin/v1/config/export', 'platform', get('/admin/v1/config/export'), 200],
      ['GET /admin/v1/status', 'platform', get('/admin/v1/status'), 200],
      ['GET /admin/v1/overview', 'platform', get('/admin/v1/overview'), 200],
      ['GET /admin/v1/projections', 'platform', get('/admin/v1/projections'), 200],
      ['POST /admin/v1/audit/verify', 'platform', { method: 'POST', path: '/admin/v1/audit/verify' }, 200],
      ['GET /admin/v1/audit/export', 'platform', get('/admin/v1/audit/export'), 200],
      ['GET /admin/v1/audit/checkpoint', 'platform', get('/admin/v1/audit/checkpoint'), 200],
      ['GET /admin/v1/audit/checkpoints', 'platform', get('/admin/v1/audit/checkpoints'), 200],
      ['GET /admin/v1/audit/public-key', 'platform', get('/admin/v1/audit/public-key'), 200],
      // Not halted: answers at once (`state: not-halted`).
      ['POST /admin/v1/projections/{name}/resume', 'platform', { method: 'POST', path: '/admin/v1/projections/cost-ledger/resume' }, 200],
      // Last: the audit chain replays in the background after it answers.
      ['POST /admin/v1/projections/{name}/rebuild', 'platform', { method: 'POST', path: '/admin/v1/projections/audit-chain/rebuild' }, 202],
    ];
    return calls.map(([route, access, call, status]) => ({ route, access, refused: call, token: { call, status } }));
  })(),
];

/** Fills in what is only known once the gateway runs: request ids, the spend range, the configuration text. */
function resolved(call: Call): Call {
  const fill = (text: string) => text
    .replaceAll('{globex-stream}', `request-${globexRequest}`)
    .replaceAll('{globex}', globexRequest)
    .replaceAll('{acme}', acmeRequest)
    .replaceAll('{range}', spendRange());
  const body = call.body && typeof call.body === 'object' && (call.body as { yaml?: string }).yaml === '{config}'
    ? { ...(call.body as object), yaml: readFileSync(gw.configPath, 'utf8') }
    : call.body;
  return { ...call, path: fill(call.path), ...(body !== undefined ? { body } : {}) };
}

const resolvedId = (id: string) => (id === '{globex}' ? globexRequest : id);

beforeAll(async () => {
  for (const name of Object.keys(SECRETS) as Array<keyof typeof SECRETS>) {
    secrets[name] = generateApiKey();
    process.env[SECRETS[name]] = secrets[name];
  }
  process.env[AUDIT_KEY_ENV] = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  scratch = databaseUrl ? await createScratchDatabase(databaseUrl) : null;
  gw = await startTestGateway({
    databaseUrl: scratch?.url ?? null,
    yaml,
    environment: {
      adminToken: ADMIN_TOKEN,
      cache: { exactCacheEnabled: true },
      audit: { signingKeyRef: `env:${AUDIT_KEY_ENV}`, checkpointIntervalMs: 0 },
    },
  });
  admin = new AdminClient(gw.url, ADMIN_TOKEN);
  acmeAdmin = admin.withToken(secrets.acmeAdmin);
  globexAdmin = admin.withToken(secrets.globexAdmin);
  platformKey = admin.withToken(secrets.platform);
  const acme = await chat(gw.key, { model: 'chat', messages: [{ role: 'user', content: 'hello from acme' }] });
  const globex = await chat(secrets.globexApp, { model: 'chat', messages: [{ role: 'user', content: 'hello from globex' }] });
  expect([acme.status, globex.status]).toEqual([200, 200]);
  acmeRequest = acme.headers.get('x-request-id')!;
  globexRequest = globex.headers.get('x-request-id')!;
  // One exact-cache entry per tenant, each served once from the cache to be sure it is stored.
  for (const [key, body] of [[gw.key, acmeCached], [secrets.globexApp, globexCached]] as const) {
    expect((await chat(key, body)).headers.get('x-switchyard-cache')).toBe('miss');
    expect((await chat(key, body)).headers.get('x-switchyard-cache')).toBe('hit');
  }
  await gw.gateway.platform.committer.drain();
  await gw.gateway.platform.runner.catchUp();
}, 90_000);

afterAll(async () => {
  await gw?.close();
  await scratch?.drop();
  for (const name of [...Object.values(SECRETS), AUDIT_KEY_ENV]) delete process.env[name];
});

describe('every admin route: a tenant admin key against another tenant, its own tenant and the platform', () => {
  test('the table covers every admin route Nest registers, with the access the guard enforces and docs/openapi.json states', () => {
    const reflector = gw.gateway.app.get(Reflector);
    const registered = new Map<string, Access>();
    for (const { method, pattern, handler, controller } of registeredRoutes(gw.gateway.app)) {
      if (!pattern.startsWith('/admin/')) continue;
      const access = tenantAccessOf(reflector, handler, controller);
      registered.set(`${method} ${openApiPath(pattern)}`, adminTokenOnly(reflector, handler, controller) ? 'admin-token'
        : access === undefined ? 'platform' : access.kind === 'scoped' ? 'tenant' : 'platform-on-tenant');
    }
    const table = new Map(cases.map((c) => [c.route, c.access]));
    expect(cases.length).toBe(table.size);
    expect([...registered.keys()].filter((route) => !table.has(route)).sort()).toEqual([]);
    expect([...table.keys()].filter((route) => !registered.has(route)).sort()).toEqual([]);
    expect(Object.fromEntries([...table].sort())).toEqual(Object.fromEntries([...registered].sort()));
    expect(registered.size).toBeGreaterThanOrEqual(48);
    // The OpenAPI document states the same access for every admin operation.
    const openapi = JSON.parse(readFileSync(fileURLToPath(new URL('../../../docs/openapi.json', import.meta.url)), 'utf8'));
    const documented = new Map<string, string>();
    for (const [path, operations] of Object.entries(openapi.paths as Record<string, Record<string, { 'x-switchyard-access'?: string }>>)) {
      if (!path.startsWith('/admin/')) continue;
      for (const [method, operation] of Object.entries(operations)) documented.set(`${method.toUpperCase()} ${path}`, operation['x-switchyard-access'] ?? '(none)');
    }
    expect(Object.fromEntries([...documented].sort())).toEqual(Object.fromEntries([...registered].sort()));
  });

  describe.each(cases.map((c) => [c.route, c] as const))('%s', (_route, entry) => {
    const { access } = entry;

    if (entry.foreign) {
      test.each(entry.foreign.map((f) => [f.call.path, f] as const))(
        "tenant A's admin on tenant B (%s): 404 exactly as for nothing, and the log does not grow", async (_path, foreign) => {
          const other = await appendsNothing(() => send(acmeAdmin, resolved(foreign.call)));
          const missing = await appendsNothing(() => send(acmeAdmin, resolved(foreign.missing)));
          expect({ status: other.status, code: other.json?.error?.code }).toEqual({ status: 404, code: foreign.code });
          expect({ status: missing.status, code: missing.json?.error?.code }).toEqual({ status: 404, code: foreign.code });
          const [otherId, missingId] = foreign.ids.map(resolvedId);
          expect(other.json.error.message.replaceAll(otherId, '<id>')).toBe(missing.json.error.message.replaceAll(missingId, '<id>'));
          expect(Object.keys(other.json.error)).toEqual(Object.keys(missing.json.error));
          expect(other.headers.get('etag')).toBeNull();
        },
      );
    }

    if (entry.foreignFiltered) {
      test.each(entry.foreignFiltered.map((f) => [f.call.path, f] as const))(
        "tenant A's admin asking about tenant B (%s) gets nothing of B, and the log does not grow", async (_path, expectation) => {
          const response = await appendsNothing(() => send(acmeAdmin, resolved(expectation.call)));
          expect(response.status).toBe(expectation.status);
          await expectation.check?.(response);
        },
      );
    }

    if (access === 'platform' || access === 'admin-token') {
      test(`tenant A's admin is refused: 403 ${access === 'platform' ? 'platform_scope_required' : 'admin_token_required'}, and the log does not grow`, async () => {
        for (const client of [acmeAdmin, globexAdmin]) {
          const response = await appendsNothing(() => send(client, resolved(entry.refused!)));
          expect({ status: response.status, code: response.json?.error?.code })
            .toEqual({ status: 403, code: access === 'platform' ? 'platform_scope_required' : 'admin_token_required' });
        }
      });
    }

    if (access === 'platform-on-tenant') {
      test("on its own tenant, tenant A's admin is refused: 403 platform_scope_required, and the log does not grow", async () => {
        const response = await appendsNothing(() => send(acmeAdmin, resolved(entry.own!.call)));
        expect({ status: response.status, code: response.json?.error?.code }).toEqual({ status: 403, code: 'platform_scope_required' });
      });
    }

    if (access === 'tenant') {
      test(`on its own tenant, tenant A's admin gets ${entry.own!.status}`, async () => {
        const response = await send(acmeAdmin, resolved(entry.own!.call));
        expect({ status: response.status, body: response.status === entry.own!.status ? null : response.text }).toEqual({ status: entry.own!.status, body: null });
        await entry.own!.check?.(response);
      });
    }

    test(`the admin token gets ${entry.token.status}${entry.token.call.method === 'GET' ? ', and so does a platform key' : ''}`, async () => {
      const call = resolved(entry.token.call);
      const response = await send(admin, call);
      expect({ status: response.status, body: response.status === entry.token.status ? null : response.text }).toEqual({ status: entry.token.status, body: null });
      await entry.token.check?.(response);
      if (call.method === 'GET') {
        const byPlatformKey = await send(platformKey, call);
        expect(byPlatformKey.status).toBe(entry.token.status);
        await entry.token.check?.(byPlatformKey);
      }
      if (access === 'admin-token') expect((await send(platformKey, call)).json.error.code).toBe('admin_token_required');
    });
  });

  test('after all of it, tenant B is untouched: active, its keys serving, its cached answer intact', async () => {
    expect((await admin.get('/tenants/globex')).json).toMatchObject({ status: 'active', limits: { rpm: null }, budget: null });
    expect((await admin.get('/keys/globex-app')).json).toMatchObject({ status: 'active', limits: { rpm: null } });
    expect((await chat(secrets.globexApp, { model: 'chat', messages: [{ role: 'user', content: 'still served' }] })).status).toBe(200);
  });
});

describe('what a tenant admin may grant', () => {
  test('it cannot mint a platform key, grant a scope it lacks, or give a key another tenant', async () => {
    for (const [body, expected] of [
      [{ id: 'acme-escalate', tenant: 'acme', scopes: ['admin:platform'] }, "'admin:platform'"],
      [{ id: 'acme-escalate', tenant: 'acme', scopes: ['inference', 'usage:read'] }, "'usage:read'"],
    ] as const) {
      const response = await appendsNothing(() => acmeAdmin.post('/keys', body));
      expect({ status: response.status, code: response.json.error.code }).toEqual({ status: 403, code: 'grant_not_allowed' });
      expect(response.json.error.message).toContain(expected);
    }
    // A key with admin alone may not hand out inference, which it does not hold.
    const bare = await appendsNothing(() => globexAdmin.post('/keys', { id: 'globex-new', tenant: 'globex' }));
    expect({ status: bare.status, code: bare.json.error.code }).toEqual({ status: 403, code: 'grant_not_allowed' });
    expect((await appendsNothing(() => acmeAdmin.patch('/keys/acme-admin', { scopes: ['admin', 'admin:platform'] }))).status).toBe(403);
    expect((await admin.get('/keys/acme-admin')).json.scopes).toEqual(['admin', 'inference', 'models:read']);
  });

  test('it cannot change, rotate or revoke a key of its tenant that holds more than it does', async () => {
    expect((await admin.post('/keys', { id: 'acme-stronger', tenant: 'acme', scopes: ['admin', 'usage:read'] })).status).toBe(201);
    for (const [method, path, body] of [
      ['PATCH', '/keys/acme-stronger', { limits: { rpm: 1 } }], ['POST', '/keys/acme-stronger/rotate', {}], ['POST', '/keys/acme-stronger/revoke', {}],
    ] as const) {
      const response = await appendsNothing(() => acmeAdmin.send(method, path, body));
      expect({ path, status: response.status, code: response.json.error.code }).toEqual({ path, status: 403, code: 'grant_not_allowed' });
    }
    // It may read it (it is its tenant's), and the platform may change it.
    expect((await acmeAdmin.get('/keys/acme-stronger')).status).toBe(200);
    expect((await admin.post('/keys/acme-stronger/revoke', {})).status).toBe(200);
  });

  test('a tenant admin limited to some aliases grants only those', async () => {
    const issued = await admin.post('/keys', { id: 'acme-narrow-admin', tenant: 'acme', scopes: ['admin', 'inference'], aliases: ['solo'] });
    expect(issued.status).toBe(201);
    const narrow = admin.withToken(issued.json.key);
    for (const aliases of [[], ['chat'], ['solo', 'chat']]) {
      const response = await appendsNothing(() => narrow.post('/keys', { id: 'acme-wide', tenant: 'acme', scopes: ['inference'], aliases }));
      expect({ aliases, status: response.status, code: response.json.error.code }).toEqual({ aliases, status: 403, code: 'grant_not_allowed' });
    }
    const ok = await narrow.post('/keys', { id: 'acme-narrow-app', tenant: 'acme', scopes: ['inference'], aliases: ['solo'] });
    expect(ok.status).toBe(201);
    // Its change is recorded with its own id as the actor.
    const issuedEvent = (await gw.gateway.platform.store.readStream('apikey-acme-narrow-app'))[0];
    expect(issuedEvent.metadata.actor).toBe('key:acme-narrow-admin');
    expect((await narrow.post('/keys/acme-narrow-app/revoke', {})).status).toBe(200);
  });
});

describe('the platform scope', () => {
  test('a key with admin:platform administers every tenant (recorded as its actor), but cannot change provider credentials', async () => {
    const issued = await platformKey.post('/keys', { id: 'globex-by-platform', tenant: 'globex', scopes: ['inference'] });
    expect(issued.status).toBe(201);
    expect((await gw.gateway.platform.store.readStream('apikey-globex-by-platform'))[0].metadata.actor).toBe('key:ops-platform');
    expect((await platformKey.post('/tenants/initech/suspend', { reason: 'platform key' })).json.status).toBe('suspended');
    expect((await platformKey.post('/tenants/initech/reinstate')).json.status).toBe('active');
    expect((await platformKey.post('/keys', { id: 'made-platform', tenant: 'ops', scopes: ['admin:platform'] })).status).toBe(201);
    const provider = await appendsNothing(() => platformKey.post('/providers', { id: 'nope', type: 'openai-compatible', baseUrl: 'https://x.example.com/v1', apiKey: 'env:SY_TEST_UPSTREAM_KEY' }));
    expect(provider.json.error.code).toBe('admin_token_required');
    expect((await admin.post('/keys/made-platform/revoke', {})).status).toBe(200);
    expect((await admin.post('/keys/globex-by-platform/revoke', {})).status).toBe(200);
  });

  test('/metrics spans every tenant: a tenant admin is refused (403 platform_scope_required), a platform key reads it', async () => {
    const scrape = (token: string) => fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    const refused = await scrape(secrets.acmeAdmin);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('platform_scope_required');
    expect((await scrape(secrets.platform)).status).toBe(200);
    expect((await scrape(ADMIN_TOKEN)).status).toBe(200);
  });

  test('a key without any admin scope is refused as before (403 insufficient_scope)', async () => {
    const response = await admin.withToken(gw.key).get('/keys');
    expect({ status: response.status, code: response.json.error.code }).toEqual({ status: 403, code: 'insufficient_scope' });
  });
});

describe("a tenant admin's event pages", () => {
  async function allPages(client: AdminClient, limit: number): Promise<{ events: Array<{ globalPosition: number; streamId: string }>; pages: number }> {
    const events: Array<{ globalPosition: number; streamId: string }> = [];
    let after = '';
    for (let pages = 1; ; pages++) {
      const page = await client.get(`/events?limit=${limit}${after ? `&after=${after}` : ''}`);
      expect(page.status).toBe(200);
      // Nothing but the events, the token and whether the end was reached: no totals of any kind.
      expect(Object.keys(page.json).sort()).toEqual(['caughtUp', 'data', 'next']);
      events.push(...page.json.data);
      after = page.json.next;
      if (page.json.caughtUp) return { events, pages };
      if (pages > 500) throw new Error('paging did not end');
    }
  }

  test('paging with small pages, and with a scan window smaller than the log, gives exactly the one-page answer', async () => {
    const whole = await acmeAdmin.get('/events?limit=1000');
    expect(whole.json.caughtUp).toBe(true);
    const expected = whole.json.data.map((e: { globalPosition: number }) => e.globalPosition);
    expect(expected.length).toBeGreaterThan(10);
    const history = gw.gateway.app.get(EventHistory);
    const window = history.tenantScanWindow;
    try {
      for (const [limit, scan] of [[3, window], [2, 5], [50, 7]] as const) {
        history.tenantScanWindow = scan;
        const { events, pages } = await allPages(acmeAdmin, limit);
        expect({ limit, scan, positions: events.map((e) => e.globalPosition) }).toEqual({ limit, scan, positions: expected });
        expect(pages).toBeGreaterThan(1);
      }
    } finally {
      history.tenantScanWindow = window;
    }
    onlyAboutAcme(whole.json.data, await acmeRequestStreams());
  });

  test("a tenant admin's next page shows what its tenant appends later, and still nothing of others", async () => {
    const first = await acmeAdmin.get('/events?limit=1000');
    const answered = await chat(gw.key, { model: 'solo', messages: [{ role: 'user', content: 'one more for acme' }] });
    await chat(secrets.globexApp, { model: 'solo', messages: [{ role: 'user', content: 'one more for globex' }] });
    await gw.gateway.platform.committer.drain();
    const next = await acmeAdmin.get(`/events?after=${first.json.next}`);
    expect(next.json.data.map((e: { streamId: string }) => e.streamId)).toContain(`request-${answered.headers.get('x-request-id')}`);
    expect(next.text).not.toContain('globex');
  });

  test("after= another tenant's position is refused exactly as a position with no event", async () => {
    const globexEvents = await admin.get(`/events?stream=request-${globexRequest}`);
    const position = globexEvents.json.data[0].globalPosition as number;
    const foreign = await acmeAdmin.get(`/events?after=${position}`);
    const missing = await acmeAdmin.get('/events?after=999999999');
    expect({ status: foreign.status, code: foreign.json.error.code }).toEqual({ status: 400, code: 'invalid_page_token' });
    expect(foreign.json.error.message.replaceAll(String(position), 'N'))
      .toBe(missing.json.error.message.replaceAll('999999999', 'N'));
    // The admin token still resumes after any position.
    expect((await admin.get(`/events?after=${position}`)).status).toBe(200);
    // The same rule for the audit listing.
    const auditForeign = await acmeAdmin.get(`/audit?after=${position}`);
    expect(auditForeign.json.error.code).toBe('invalid_page_token');
  });
});
