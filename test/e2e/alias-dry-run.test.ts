import { AdminClient } from '../support/admin-client.js';
import { startTestGateway, type TestGateway } from '../support/gateway-harness.js';

/**
 * `PUT /admin/v1/aliases/{name}?dryRun=true` (the console's alias editor previews with it): the publish
 * decided and checked as a real one, answered, and nothing appended — refusals included.
 */
const ADMIN_TOKEN = 'alias-dry-run-admin-token-0123456789';

describe('alias publish dry run', () => {
  let gw: TestGateway;
  let admin: AdminClient;

  beforeAll(async () => {
    gw = await startTestGateway({ environment: { adminToken: ADMIN_TOKEN } });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
  });
  afterAll(() => gw?.close());

  const aliasEvents = () => gw.countEvents(['AliasPublished', 'AliasRetired']);

  test('a route to a deployment that does not exist: refused as the publish would be, nothing appended', async () => {
    const before = await aliasEvents();
    const refused = await admin.put('/aliases/chat?dryRun=true', { routes: [{ deployment: 'nowhere' }] });
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe('unsafe_publication');
    expect(await aliasEvents()).toBe(before);
  });

  test('a stale If-Match: 409, as the publish would answer', async () => {
    const stale = await admin.put('/aliases/chat?dryRun=true', { routes: [{ deployment: 'backup' }] }, { 'if-match': '"7"' });
    expect(stale.status).toBe(409);
    expect(stale.json.error.code).toBe('version_conflict');
  });

  test('a change: what would be appended and the version it would declare; the alias is unchanged', async () => {
    const before = await aliasEvents();
    const current = await admin.get('/aliases/chat');
    const preview = await admin.put('/aliases/chat?dryRun=true', {
      strategy: 'weighted', routes: [{ deployment: 'primary', weight: 1 }, { deployment: 'backup', weight: 3 }],
    }, { 'if-match': current.headers.get('etag')! });
    expect(preview.status).toBe(200);
    expect(preview.json).toMatchObject({
      dryRun: true,
      wouldAppend: ['AliasPublished'],
      current: { name: 'chat', aliasVersion: 1, strategy: 'priority' },
      proposed: { aliasVersion: 2, strategy: 'weighted', routes: [{ deployment: 'primary', weight: 1, priority: 0 }, { deployment: 'backup', weight: 3, priority: 0 }] },
    });
    expect(await aliasEvents()).toBe(before);
    expect((await admin.get('/aliases/chat')).json).toMatchObject({ aliasVersion: 1, strategy: 'priority' });
  });

  test('the definition as it is: nothing would be appended', async () => {
    const current = (await admin.get('/aliases/solo')).json;
    const same = await admin.put('/aliases/solo?dryRun=true', {
      strategy: current.strategy, routes: current.routes, policy: current.policy, visibility: current.visibility, contentPolicy: current.contentPolicy,
    });
    expect(same.status).toBe(200);
    expect(same.json).toMatchObject({ wouldAppend: [], proposed: { aliasVersion: 1 } });
  });

  test('a new alias: version 1 would be published, and no current version', async () => {
    const fresh = await admin.put('/aliases/brand-new?dryRun=true', { routes: [{ deployment: 'primary' }] });
    expect(fresh.status).toBe(200);
    expect(fresh.json).toMatchObject({ wouldAppend: ['AliasPublished'], current: null, proposed: { aliasVersion: 1 } });
    expect((await admin.get('/aliases/brand-new')).status).toBe(404);
  });
});
