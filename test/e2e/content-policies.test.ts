import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { AdminClient } from '../support/admin-client.js';
import { defaultYaml, postJson, startTestGateway, type TestGateway } from '../support/gateway-harness.js';
import { createScratchDatabase } from '../support/services.js';

const ADMIN_TOKEN = 'e2e-content-policy-admin-token-0123';
/** The gateway key, the same across the restart (the harness would make a new one per start, which the stored key refuses). */
const KEY_ENV = 'CONTENT_POLICY_E2E_KEY';
process.env[KEY_ENV] = generateApiKey();

const PII_STRICT = `
contentPolicies:
  - id: pii-strict
    input:  { email: tokenize, phone: tokenize, card: block, iban: mask, national_id: mask, secret: block,
              ip_address: log, custom: [{ name: project-code, pattern: "PRJ-[0-9]{6}", action: mask }],
              deny_terms: { terms: ["project nightingale"], action: block },
              prompt_injection: log }
    output: { email: mask, secret: mask }
`;

/** The harness's configuration, with the policy attached to tenant acme. */
const withPolicy = (mockUrl: string) =>
  `${defaultYaml(mockUrl, KEY_ENV).replace('  - id: acme\n', '  - id: acme\n    contentPolicy: pii-strict\n')}${PII_STRICT}`;

const ALIAS_EXTRA = { input: { email: 'block' }, output: {}, placeholderInstruction: true };

/**
 * Content policies through the admin API and the configuration file, on a real store: refusals first
 * (nothing changes), then versions, attachments, the policy RequestAdmitted records for a request served
 * by the mock provider, and a restart that keeps all of it.
 */
describe('content policies (admin API, apply, RequestAdmitted, restart)', () => {
  let database: { url: string; drop: () => Promise<void> } | null = null;
  let gw: TestGateway;
  let admin: AdminClient;

  beforeAll(async () => {
    const base = process.env.DATABASE_URL;
    database = base ? await createScratchDatabase(base) : null;
    gw = await startTestGateway({ databaseUrl: database?.url ?? undefined, yaml: withPolicy, environment: { adminToken: ADMIN_TOKEN } });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
  });
  afterAll(async () => {
    await gw?.close();
    await database?.drop();
  });

  const eventCount = () => gw.countEvents(['ContentPolicyDefined', 'ContentPolicyUpdated', 'ContentPolicyRetired', 'TenantContentPolicySet', 'AliasPublished']);

  /** A chat request on `alias`; the policy its RequestAdmitted recorded (undefined when none applied). */
  async function admittedPolicy(alias: string) {
    const answer = await postJson(gw, '/v1/chat/completions', { model: alias, messages: [{ role: 'user', content: 'Hello' }] }, { authorization: `Bearer ${process.env[KEY_ENV]}` });
    expect(answer.status).toBe(200);
    const requestId = answer.headers.get('x-request-id')!;
    const admitted = (await gw.requestEvents(requestId)).find((e) => e.type === 'RequestAdmitted')!;
    const history = await admin.get(`/requests/${requestId}`);
    const recorded = (admitted.data as { contentPolicy?: { sources: unknown[]; manifest?: { findings: unknown[] } } }).contentPolicy;
    expect(history.json.admission.contentPolicy).toEqual(recorded);
    // The input manifest is content-safety's (content-safety.test.ts); here: which policies, at which versions.
    if (recorded) expect(recorded.manifest?.findings).toEqual([]);
    return recorded && { sources: recorded.sources };
  }

  describe('refusals change nothing', () => {
    let before: number;
    beforeAll(async () => {
      before = await eventCount();
    });
    afterAll(async () => {
      expect(await eventCount()).toBe(before);
    });

    test('an invalid definition is 400 validation_failed listing every problem at its path', async () => {
      const response = await admin.put('/content-policies/bad', {
        input: { email: 'redact', custom: [{ name: 'c', pattern: '(a+)+$', action: 'mask' }] }, output: { email: 'tokenize' }, extra: true,
      });
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe('validation_failed');
      expect(response.json.error.fields.map((f: { path: string }) => f.path).sort()).toEqual(['extra', 'input.custom[0].pattern', 'input.email', 'output.email']);
    });

    test('attaching a policy that does not exist is 400 naming it, on a tenant, an alias and a key', async () => {
      const tenant = await admin.put('/tenants/acme/content-policy', { contentPolicy: 'ghost' });
      expect(tenant.status).toBe(400);
      expect(tenant.json.error).toMatchObject({ code: 'unknown_content_policy', message: expect.stringContaining('content policy ghost does not exist') });
      const alias = await admin.put('/aliases/solo', { routes: [{ deployment: 'primary' }], contentPolicy: 'ghost' });
      expect(alias.status).toBe(400);
      expect(alias.json.error.message).toContain('alias solo: content policy ghost');
      const key = await admin.patch('/keys/acme-app', { contentPolicy: 'ghost' });
      expect(key.status).toBe(400);
      expect(key.json.error.message).toContain('key acme-app: content policy ghost');
    });

    test('retiring a policy still attached is 409 naming the attachment; an unknown one is 404', async () => {
      const attached = await admin.delete('/content-policies/pii-strict');
      expect(attached.status).toBe(409);
      expect(attached.json.error).toMatchObject({ code: 'content_policy_attached', message: expect.stringContaining('tenant acme') });
      expect((await admin.delete('/content-policies/ghost')).status).toBe(404);
      expect((await admin.get('/content-policies/ghost')).json.error.code).toBe('content_policy_not_found');
      // Sent with a JSON content type and no body, as many clients send a DELETE: the same answer, not invalid_json.
      const typed = await admin.delete('/content-policies/pii-strict?dryRun=true', { 'content-type': 'application/json' });
      expect([typed.status, typed.json.error?.code]).toEqual([409, 'content_policy_attached']);
    });

    test('session tokenScope without SWITCHYARD_PII_KEY is 422 saying what to set', async () => {
      const response = await admin.put('/content-policies/sessions', { input: { email: 'tokenize' }, tokenScope: 'session' });
      expect(response.status).toBe(422);
      expect(response.json.error).toMatchObject({ code: 'content_policy_needs_pii_key', message: expect.stringContaining('SWITCHYARD_PII_KEY') });
    });

    test('a tenant admin neither reads policies nor attaches or detaches one on a key (403)', async () => {
      const issued = await admin.post('/keys', { id: 'acme-admin', tenant: 'acme', scopes: ['admin', 'inference', 'models:read'] });
      expect(issued.status).toBe(201);
      const tenantAdmin = admin.withToken(issued.json.key);
      expect((await tenantAdmin.get('/content-policies')).status).toBe(403);
      const attach = await tenantAdmin.patch('/keys/acme-app', { contentPolicy: 'pii-strict' });
      expect(attach.status).toBe(403);
      expect(attach.json.error.message).toContain('Only the platform changes the content policy');
      expect((await tenantAdmin.post('/keys', { tenant: 'acme', contentPolicy: 'pii-strict' })).status).toBe(403);
      // A change of something else leaves the key's policy as it is.
      expect((await tenantAdmin.patch('/keys/acme-app', { contentPolicy: null, limits: { rpm: 1000 } })).status).toBe(200);
    });

    test('a dry run says what would be appended and appends nothing', async () => {
      const response = await admin.put('/content-policies/pii-strict?dryRun=true', { input: { email: 'mask' } });
      expect(response.status).toBe(200);
      expect(response.json).toMatchObject({ dryRun: true, wouldAppend: ['ContentPolicyUpdated'], policy: { version: 2, input: { email: 'mask' } } });
      expect((await admin.get('/content-policies/pii-strict')).json.version).toBe(1);
    });
  });

  test('the file\'s policy is version 1, attached to its tenant, and a request records it on RequestAdmitted', async () => {
    const policy = await admin.get('/content-policies/pii-strict');
    expect(policy.json).toMatchObject({ id: 'pii-strict', status: 'live', version: 1, tokenScope: 'request', unresolvedTokenPolicy: 'leave-masked', attachedTo: ['tenant acme'] });
    expect(await admittedPolicy('chat')).toEqual({ sources: [{ policyId: 'pii-strict', version: 1, attachedTo: 'tenant' }] });
  });

  test('a changed definition is version 2 for the next request; the same definition again appends nothing', async () => {
    const current = (await admin.get('/content-policies/pii-strict')).json;
    const { id: _id, status: _s, version: _v, streamVersion: _sv, attachedTo: _a, ...definition } = current;
    const changed = await admin.put('/content-policies/pii-strict', { ...definition, output: { email: 'mask', secret: 'block' } });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ version: 2, appended: ['ContentPolicyUpdated'] });
    expect(await admittedPolicy('chat')).toEqual({ sources: [{ policyId: 'pii-strict', version: 2, attachedTo: 'tenant' }] });
    const again = await admin.put('/content-policies/pii-strict', { ...definition, output: { email: 'mask', secret: 'block' } });
    expect(again.json).toMatchObject({ version: 2, appended: [] });
  });

  test('policies on an alias and a key combine with the tenant\'s; the list pages', async () => {
    expect((await admin.put('/content-policies/alias-extra', ALIAS_EXTRA)).status).toBe(201);
    expect((await admin.put('/aliases/solo', { routes: [{ deployment: 'primary' }], contentPolicy: 'alias-extra' })).json.contentPolicy).toBe('alias-extra');
    expect((await admin.patch('/keys/acme-app', { contentPolicy: 'alias-extra' })).json.contentPolicy).toBe('alias-extra');
    expect(await admittedPolicy('solo')).toEqual({
      sources: [
        { policyId: 'pii-strict', version: 2, attachedTo: 'tenant' }, { policyId: 'alias-extra', version: 1, attachedTo: 'key' },
        { policyId: 'alias-extra', version: 1, attachedTo: 'alias' },
      ],
    });
    const first = await admin.get('/content-policies?limit=1');
    expect(first.json.data.map((p: { id: string }) => p.id)).toEqual(['alias-extra']);
    expect(first.json.next).toBe('alias-extra');
    const second = await admin.get(`/content-policies?limit=1&after=${first.json.next}`);
    expect(second.json).toMatchObject({ data: [{ id: 'pii-strict' }], next: null });
  });

  test('detached, a policy retires; then nothing of it applies', async () => {
    expect((await admin.delete('/tenants/acme/content-policy')).json.contentPolicy).toBeNull();
    const retired = await admin.delete('/content-policies/pii-strict');
    expect(retired.status).toBe(200);
    expect(retired.json).toMatchObject({ status: 'retired', version: 2, appended: ['ContentPolicyRetired'] });
    expect((await admin.put('/tenants/acme/content-policy', { contentPolicy: 'pii-strict' })).json.error.message).toContain('content policy pii-strict is retired');
    expect(await admittedPolicy('solo')).toEqual({
      sources: [{ policyId: 'alias-extra', version: 1, attachedTo: 'key' }, { policyId: 'alias-extra', version: 1, attachedTo: 'alias' }],
    });
    expect((await admin.patch('/keys/acme-app', { contentPolicy: null })).status).toBe(200);
    expect(await admittedPolicy('chat')).toBeUndefined();
  });

  test('a restart keeps every policy, version and attachment', async () => {
    if (!database) return; // the embedded store's directory goes with its gateway; PostgreSQL outlives it
    await gw.close();
    gw = await startTestGateway({ databaseUrl: database.url, yaml: (mockUrl) => defaultYaml(mockUrl, KEY_ENV), environment: { adminToken: ADMIN_TOKEN } });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
    const all = await admin.get('/content-policies?status=all');
    expect(all.json.data.map((p: { id: string; status: string; version: number; attachedTo: string[] }) => [p.id, p.status, p.version, p.attachedTo])).toEqual([
      ['alias-extra', 'live', 1, ['alias solo']], ['pii-strict', 'retired', 2, []],
    ]);
    expect(await admittedPolicy('solo')).toEqual({ sources: [{ policyId: 'alias-extra', version: 1, attachedTo: 'alias' }] });
  });
});
