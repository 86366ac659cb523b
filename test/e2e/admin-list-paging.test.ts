import { TenantSpendReader } from '../../modules/access/admin/tenant-spend-reader.js';
import { AdminClient } from '../support/admin-client.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';

const ADMIN_TOKEN = 'list-paging-admin-token-0123456789';
const TENANTS = ['t-05', 't-01', 't-04', 't-02', 't-03'];

/** The id a list's items are keyed by: aliases by name, everything else by id. */
const idOf = (item: { id?: string; name?: string }) => item.id ?? item.name!;

/**
 * `?limit=&pageToken=` on the admin lists the console shows: keyset pages in id order that cover the list
 * exactly once, bounds and forged tokens refused before anything is read, a tenant admin confined as
 * without paging, and the tenants list reading spend for the tenants of its page only.
 */
describe('admin lists page on the server', () => {
  let gw: TestGateway;
  let admin: AdminClient;
  let tenantAdmin: AdminClient;
  const spendAsked: string[][] = [];

  /** Follows nextPageToken from the first page; every page is checked against the limit. */
  const walk = async (client: AdminClient, path: string, limit: number) => {
    const pages: string[][] = [];
    for (let token: string | null = null; ;) {
      const separator = path.includes('?') ? '&' : '?';
      const response = await client.get(`${path}${separator}limit=${limit}${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`);
      expect(response.status).toBe(200);
      const ids = (response.json.data as Array<{ id?: string; name?: string }>).map(idOf);
      expect(ids.length).toBeLessThanOrEqual(limit);
      pages.push(ids);
      token = response.json.nextPageToken;
      if (token === null) return pages;
      expect(pages.length).toBeLessThan(50);
    }
  };
  const whole = async (client: AdminClient, path: string) => {
    const response = await client.get(path);
    expect(response.status).toBe(200);
    expect(response.json.nextPageToken).toBeNull();
    return (response.json.data as Array<{ id?: string; name?: string }>).map(idOf);
  };

  beforeAll(async () => {
    gw = await startTestGateway({ environment: { adminToken: ADMIN_TOKEN } });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
    for (const id of TENANTS) expect((await admin.post('/tenants', { id })).status).toBe(201);
    for (const [index, tenant] of ['t-02', 't-02', 't-02', 'acme', 't-01', 't-02'].entries()) {
      expect((await admin.post('/keys', { id: `k-${index}`, tenant, scopes: ['inference'] })).status).toBe(201);
    }
    const issued = await admin.post('/keys', { id: 'k-t02-admin', tenant: 't-02', scopes: ['admin'] });
    expect(issued.status).toBe(201);
    tenantAdmin = new AdminClient(gw.url, issued.json.key);
    for (const name of ['b-alias', 'a-alias', 'z-alias']) expect((await admin.put(`/aliases/${name}`, { routes: [{ deployment: 'primary' }] })).status).toBe(201);
    for (const id of ['p-two', 'p-one', 'p-three']) expect((await admin.put(`/content-policies/${id}`, { input: { email: 'block' }, output: {} })).status).toBe(201);
    // acme spends today: its spend must appear on the page that holds acme.
    expect((await postJson(gw, '/v1/chat/completions', { model: 'chat', messages: [{ role: 'user', content: 'spend something' }] })).status).toBe(200);
    await gw.gateway.platform.committer.drain();
    await gw.gateway.platform.runner.catchUp();
    const reader = gw.gateway.app.get(TenantSpendReader, { strict: false });
    const current = reader.current.bind(reader);
    reader.current = (ids, now) => {
      spendAsked.push([...ids]);
      return current(ids, now);
    };
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });

  test('bad limits and forged tokens are 400 naming the parameter, and nothing is read', async () => {
    const token = Buffer.from('t-01').toString('base64url');
    const bad: Array<[string, string]> = [
      ['limit=0', 'limit'], ['limit=501', 'limit'], ['limit=ten', 'limit'], ['limit=1.5', 'limit'], ['limit=-1', 'limit'], ['limit=', 'limit'], ['limit=1&limit=2', 'limit'],
      ['pageToken=not%20a%20token', 'pageToken'], ['pageToken=', 'pageToken'], [`pageToken=${Buffer.from('t 01').toString('base64url')}`, 'pageToken'],
      [`pageToken=${token}=`, 'pageToken'], [`pageToken=${token}&pageToken=${token}`, 'pageToken'],
    ];
    for (const path of ['/tenants', '/keys', '/keys?tenant=t-02', '/aliases', '/deployments', '/providers', '/content-policies']) {
      // Content policies paged before the other lists, up to 1000 a page: their bound stays (checked below).
      for (const [query, field] of bad.filter(([query]) => !(path === '/content-policies' && query === 'limit=501'))) {
        const response = await admin.get(`${path}${path.includes('?') ? '&' : '?'}${query}`);
        expect({ path, query, status: response.status, code: response.json.error?.code, fields: response.json.error?.fields }).toEqual({
          path, query, status: 400, code: 'validation_failed', fields: [expect.objectContaining({ path: field })],
        });
      }
    }
    expect(spendAsked).toEqual([]);
    // content policies kept their larger bound and their `after`; a token and `after` together are refused.
    expect((await admin.get('/content-policies?limit=1000')).status).toBe(200);
    expect((await admin.get('/content-policies?limit=1001')).json.error.fields).toEqual([expect.objectContaining({ path: 'limit' })]);
    const both = await admin.get(`/content-policies?after=p-one&pageToken=${Buffer.from('p-one').toString('base64url')}`);
    expect(both.status).toBe(400);
    expect(both.json.error.fields).toEqual([expect.objectContaining({ path: 'pageToken' })]);
  });

  test('every list: pages of 1, 2 and 500 cover it exactly once, in id order; without limit it is whole', async () => {
    const lists = ['/tenants', '/keys', '/keys?tenant=t-02', '/aliases', '/deployments', '/providers', '/content-policies?status=all'];
    for (const path of lists) {
      const all = await whole(admin, path);
      const sorted = [...all].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      expect({ path, ids: all }).toEqual({ path, ids: sorted });
      for (const limit of [1, 2, 500]) {
        const pages = await walk(admin, path, limit);
        expect({ path, limit, ids: pages.flat() }).toEqual({ path, limit, ids: sorted });
        expect(pages.length).toBe(Math.max(1, Math.ceil(sorted.length / limit)));
      }
    }
    expect(await whole(admin, '/tenants')).toEqual(['acme', 't-01', 't-02', 't-03', 't-04', 't-05']);
    expect(await whole(admin, '/keys?tenant=t-02')).toEqual(['k-0', 'k-1', 'k-2', 'k-5', 'k-t02-admin']);
    expect(await whole(admin, '/aliases')).toEqual(['a-alias', 'b-alias', 'chat', 'solo', 'z-alias']);
  });

  test('a page after the last id is empty with no next token; a token of an id gone from the list still pages after it', async () => {
    const after = (id: string) => Buffer.from(id).toString('base64url');
    expect((await admin.get(`/tenants?limit=3&pageToken=${after('zzz')}`)).json).toEqual({ data: [], nextPageToken: null });
    const page = await admin.get(`/aliases?limit=2&pageToken=${after('bz')}`);
    expect(page.json.data.map(idOf)).toEqual(['chat', 'solo']);
    expect(page.json.nextPageToken).toBe(after('solo'));
    // A token without a limit: the rest of the list.
    expect((await admin.get(`/keys?pageToken=${after('k-5')}`)).json.data.map(idOf)).toEqual(['k-t02-admin']);
  });

  test('content policies keep `next` (the last id) beside nextPageToken', async () => {
    const first = await admin.get('/content-policies?limit=2');
    expect(first.json.data.map(idOf)).toEqual(['p-one', 'p-three']);
    expect(first.json.next).toBe('p-three');
    expect(first.json.nextPageToken).toBe(Buffer.from('p-three').toString('base64url'));
    expect((await admin.get(`/content-policies?limit=2&after=${first.json.next}`)).json).toMatchObject({ data: [{ id: 'p-two' }], next: null, nextPageToken: null });
    expect((await admin.get(`/content-policies?limit=2&pageToken=${first.json.nextPageToken}`)).json).toMatchObject({ data: [{ id: 'p-two' }], next: null, nextPageToken: null });
  });

  test('a tenant admin pages within its own tenant, exactly as it reads without paging', async () => {
    expect(await whole(tenantAdmin, '/tenants')).toEqual(['t-02']);
    expect((await walk(tenantAdmin, '/tenants', 1)).flat()).toEqual(['t-02']);
    const own = await whole(tenantAdmin, '/keys');
    expect(own).toEqual(['k-0', 'k-1', 'k-2', 'k-5', 'k-t02-admin']);
    expect(await walk(tenantAdmin, '/keys', 2)).toEqual([['k-0', 'k-1'], ['k-2', 'k-5'], ['k-t02-admin']]);
    // A token pointing into another tenant's ids reveals nothing of theirs.
    expect((await tenantAdmin.get(`/keys?limit=10&pageToken=${Buffer.from('k-3').toString('base64url')}`)).json.data.map(idOf)).toEqual(['k-5', 'k-t02-admin']);
    expect((await tenantAdmin.get('/keys?tenant=acme&limit=1')).status).toBe(404);
    expect((await tenantAdmin.get('/aliases?limit=1')).status).toBe(403);
  });

  test('the tenants list reads spend for the tenants of its page only, and the page shows their spend', async () => {
    spendAsked.length = 0;
    const wholeList = await admin.get('/tenants');
    const spendOf = new Map((wholeList.json.data as Array<{ id: string; spend: unknown }>).map((t) => [t.id, t.spend]));
    expect(Number((spendOf.get('acme') as { day: { spentUsd: string } }).day.spentUsd)).toBeGreaterThan(0);
    expect(spendAsked).toEqual([['acme', 't-01', 't-02', 't-03', 't-04', 't-05']]);
    spendAsked.length = 0;
    const first = await admin.get('/tenants?limit=2');
    const second = await admin.get(`/tenants?limit=2&pageToken=${first.json.nextPageToken}`);
    expect(spendAsked).toEqual([['acme', 't-01'], ['t-02', 't-03']]);
    for (const tenant of [...first.json.data, ...second.json.data]) expect(tenant.spend).toEqual(spendOf.get(tenant.id));
  });
});
