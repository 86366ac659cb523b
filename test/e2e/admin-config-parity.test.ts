import { generateApiKey, KEY_PATTERN } from '../../modules/access/api-key/key-format.js';
import { API_KEY_FIELDS, LIMITS_FIELDS, TENANT_FIELDS } from '../../src/config/gateway-config-schema.js';
import { ConfigValidationError, parseGatewayConfig } from '../../src/config/gateway-config.js';
import { fieldPaths } from '../../src/config/reference/configuration-reference.js';
import type { ConfigFields } from '../../src/kernel/index.js';
import { AdminClient, type AdminResponse } from '../support/admin-client.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { requireService } from '../support/services.js';

/**
 * Issue 34, item 7: everything the configuration file can say about a tenant or a key, the admin API
 * says in the same shape. The fields walked here come from the file's schema itself (TENANT_FIELDS,
 * API_KEY_FIELDS), so a field added to the file later fails this suite until it has a sample here and
 * the API takes it: each is set through the API (create, then update) and through `apply` of the same
 * YAML, and the two must leave the same events and the same state; each bad value is refused by both in
 * the same words, the API with a 400 naming the field and nothing appended.
 */

const ADMIN_TOKEN = 'parity-admin-token-0123456789abcdef';
process.env.PARITY_WEBHOOK_KEY = 'parity-webhook-signing-secret';

type Json = Record<string, unknown>;

/** A good value for every leaf field of a tenant and of a key (paths as the reference writes them). */
const GOOD: Record<'tenant' | 'key', Record<string, unknown>> = {
  tenant: {
    name: 'Parity Tenant',
    'limits.rpm': 60, 'limits.tpm': 20_000, 'limits.inputTpm': 15_000, 'limits.outputTpm': 5_000, 'limits.maxConcurrency': 4,
    'budget.monthlyUsd': '500', 'budget.dailyUsd': '25.5', 'budget.softPct': 60, 'budget.enforcement': 'soft',
    'budget.webhook.url': 'https://hooks.example.com/budget', 'budget.webhook.secret': 'env:PARITY_WEBHOOK_KEY', 'budget.webhook.allowPrivateNetwork': true,
    contentPolicy: 'parity-policy',
  },
  key: {
    aliases: ['solo'], scopes: ['inference', 'usage:read'], expiresAt: '2099-01-01T00:00:00.000Z',
    'limits.rpm': 30, 'limits.tpm': 9_000, 'limits.inputTpm': 6_000, 'limits.outputTpm': 3_000, 'limits.maxConcurrency': 2,
    'budget.monthlyUsd': '40', 'budget.dailyUsd': '2', 'budget.softPct': 90, 'budget.enforcement': 'soft',
    'budget.webhook.url': 'https://hooks.example.com/key-budget', 'budget.webhook.secret': 'env:PARITY_WEBHOOK_KEY', 'budget.webhook.allowPrivateNetwork': true,
    contentPolicy: 'parity-policy',
  },
};

/** A value of the wrong kind or out of bounds for every leaf field that can be wrong. */
const BAD: Record<'tenant' | 'key', Record<string, unknown>> = {
  tenant: {
    id: '../etc', name: 42,
    'limits.rpm': 0, 'limits.tpm': -5, 'limits.inputTpm': 1.5, 'limits.outputTpm': 'many', 'limits.maxConcurrency': 0,
    'budget.monthlyUsd': 'lots', 'budget.dailyUsd': '0', 'budget.softPct': 120, 'budget.enforcement': 'sometimes',
    'budget.webhook.url': 'ftp://hooks.example.com', 'budget.webhook.secret': 'a-literal-secret', 'budget.webhook.allowPrivateNetwork': 'yes',
    contentPolicy: 'not a policy id',
  },
  key: {
    id: 'bad id!', tenant: 7, aliases: 'solo', scopes: ['root'], expiresAt: 'tomorrow',
    'limits.rpm': 0, 'limits.tpm': -5, 'limits.inputTpm': 1.5, 'limits.outputTpm': 'many', 'limits.maxConcurrency': 0,
    'budget.monthlyUsd': '-3', 'budget.dailyUsd': '0', 'budget.softPct': 0, 'budget.enforcement': 'sometimes',
    'budget.webhook.url': 'not a url', 'budget.webhook.secret': 'plain-text', 'budget.webhook.allowPrivateNetwork': 1,
    contentPolicy: 7,
  },
};

/**
 * Fields that identify the definition rather than describe it, and what the API does instead. `key` is
 * the file's way to name a secret it cannot receive; the API generates the secret and shows it once.
 */
const IDENTITY: Record<'tenant' | 'key', string[]> = { tenant: ['id'], key: ['id', 'tenant', 'key'] };

/** Siblings a field needs to be valid on its own (a budget needs an amount, a webhook a url and a secret). */
const COMPANIONS: Record<string, Json> = {
  // Both amounts, so a bad one of them is the only problem (a budget needs at least one).
  budget: { monthlyUsd: '100', dailyUsd: '10' },
  'budget.webhook': { url: 'https://hooks.example.com/companion', secret: 'env:PARITY_WEBHOOK_KEY' },
};

/** Where a field's path (`budget.webhook.url`) leads, for the path of a problem (`budget.webhook.url`, `scopes[0]`). */
const PROBLEM_PATH: Record<string, string> = { scopes: 'scopes[0]' };

function leaves(fields: ConfigFields): string[] {
  return fieldPaths(fields).filter(({ field }) => !field.fields).map(({ path }) => path);
}

/** `{}` with `value` at `path`, and the companions every mapping on the way needs. */
function definitionWith(path: string, value: unknown): Json {
  const parts = path.split('.');
  const root: Json = {};
  let node = root;
  parts.forEach((part, index) => {
    if (index === parts.length - 1) {
      node[part] = value;
      return;
    }
    const prefix = parts.slice(0, index + 1).join('.');
    node[part] = { ...(COMPANIONS[prefix] ?? {}), ...((node[part] as Json | undefined) ?? {}) };
    node = node[part] as Json;
  });
  return root;
}

const withoutIds = (value: unknown, ids: string[]): unknown => JSON.parse(ids.reduce((text, id) => text.split(`"${id}"`).join('"ID"'), JSON.stringify(value)));

const targets = [
  { name: 'embedded PGlite', databaseUrl: null as string | null | undefined },
  ...(requireService('DATABASE_URL') ? [{ name: 'PostgreSQL', databaseUrl: undefined }] : []),
];

describe.each(targets)('the admin API says what the file says ($name)', ({ databaseUrl }) => {
  let gw: TestGateway;
  let admin: AdminClient;
  let counter = 0;
  const next = (prefix: string) => `${prefix}-${++counter}`;

  beforeAll(async () => {
    gw = await startTestGateway({ databaseUrl, environment: { adminToken: ADMIN_TOKEN } });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
    // What the contentPolicy samples attach: a live policy (an unknown one is refused on both paths, content-policies.test.ts).
    expect((await admin.put('/content-policies/parity-policy', { input: { email: 'mask' } })).status).toBe(201);
  });
  afterAll(async () => {
    await gw?.close();
  });

  const streamOf = async (stream: string) => (await gw.gateway.platform.store.readStream(stream)).map((e) => ({ type: e.type, data: e.data }));
  const eventCount = async () => Number((await gw.gateway.platform.database.query<{ n: string }>('SELECT count(*)::text AS n FROM events'))[0].n);

  async function apply(document: Json): Promise<AdminResponse> {
    // JSON is YAML: the file's text for the same definitions.
    const applied = await admin.post('/config/apply', { yaml: JSON.stringify(document), source: 'parity.yaml' });
    expect(applied.status).toBe(200);
    return applied;
  }

  function expectRefused(response: AdminResponse, path: string): { path: string; message: string } {
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('validation_failed');
    const fields: Array<{ path: string; message: string }> = response.json.error.fields;
    expect(fields.map((f) => f.path)).toEqual([path]);
    expect(response.json.error.message).toContain(path);
    return fields[0];
  }

  /** The file's words for the same bad value, at the same place in the mapping. */
  function fileProblem(document: Json, at: string): string {
    try {
      parseGatewayConfig(JSON.stringify(document));
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigValidationError);
      const problems = (error as ConfigValidationError).problems.filter((p) => p.startsWith(`${at}: `));
      expect(problems).toHaveLength(1);
      return problems[0].slice(at.length + 2);
    }
    throw new Error(`the file accepted ${JSON.stringify(document)}`);
  }

  test('every field of the schema has a good and a bad sample here (a new field fails until the API is shown to take it)', () => {
    for (const kind of ['tenant', 'key'] as const) {
      const all = leaves(kind === 'tenant' ? TENANT_FIELDS : API_KEY_FIELDS);
      const described = all.filter((path) => !IDENTITY[kind].includes(path));
      expect(Object.keys(GOOD[kind]).sort()).toEqual(described.sort());
      expect(Object.keys(BAD[kind]).filter((path) => !all.includes(path))).toEqual([]);
      expect(all.filter((path) => !(path in BAD[kind]) && path !== 'key')).toEqual([]);
    }
  });

  test.each(Object.keys(GOOD.tenant))('tenant %s: created and updated through the API as apply makes it from the file', async (path) => {
    const definition = definitionWith(path, GOOD.tenant[path]);
    const viaApi = next('api-tenant');
    const viaFile = next('file-tenant');
    const created = await admin.post('/tenants', { id: viaApi, ...definition });
    expect(created.status).toBe(201);
    await apply({ tenants: [{ id: viaFile, ...definition }] });
    const [apiEvents, fileEvents] = [await streamOf(`tenant-${viaApi}`), await streamOf(`tenant-${viaFile}`)];
    expect(apiEvents.length).toBeGreaterThan(path === 'name' ? 0 : 1);
    expect(withoutIds(apiEvents, [viaApi])).toEqual(withoutIds(fileEvents, [viaFile]));
    const [apiView, fileView] = [(await admin.get(`/tenants/${viaApi}`)).json, (await admin.get(`/tenants/${viaFile}`)).json];
    const shape = (view: Json) => ({ id: view.id, name: view.name, limits: view.limits, budget: view.budget });
    expect(withoutIds(shape(apiView), [viaApi])).toEqual(withoutIds(shape(fileView), [viaFile]));
    // The read shows the field where the file writes it, with the value sent.
    expect(path.split('.').reduce<any>((node, part) => node?.[part], apiView)).toEqual(GOOD.tenant[path]);
    expect(created.json).toMatchObject(shape(apiView));

    // The same change to an existing tenant: its own endpoint, the file applied again.
    const [member] = path.split('.');
    if (member === 'name') return; // a name is given at creation, on both paths (neither renames a tenant)
    const laterApi = next('api-tenant');
    const laterFile = next('file-tenant');
    await admin.post('/tenants', { id: laterApi });
    await apply({ tenants: [{ id: laterFile }] });
    // A tenant's content policy has its endpoint by the URL's spelling, with the file's member as its body.
    const updated = member === 'contentPolicy'
      ? await admin.put(`/tenants/${laterApi}/content-policy`, { contentPolicy: definition[member] })
      : await admin.put(`/tenants/${laterApi}/${member}`, definition[member]);
    expect(updated.status).toBe(200);
    await apply({ tenants: [{ id: laterFile, ...definition }] });
    expect(withoutIds(await streamOf(`tenant-${laterApi}`), [laterApi])).toEqual(withoutIds(await streamOf(`tenant-${laterFile}`), [laterFile]));
    expect(updated.json[member]).toEqual((await admin.get(`/tenants/${laterFile}`)).json[member]);
  });

  test.each(Object.keys(GOOD.key))('key %s: issued and updated through the API as apply makes it from the file', async (path) => {
    const definition = definitionWith(path, GOOD.key[path]);
    const tenant = next('key-tenant');
    await admin.post('/tenants', { id: tenant });
    const viaApi = next('api-key');
    const viaFile = next('file-key');
    const secretVariable = `PARITY_${counter}_KEY`;
    process.env[secretVariable] = generateApiKey();
    const fileKey = { id: viaFile, tenant, key: `env:${secretVariable}` };

    const issued = await admin.post('/keys', { id: viaApi, tenant, ...definition });
    expect(issued.status).toBe(201);
    expect(issued.json.key).toMatch(KEY_PATTERN);
    await apply({ tenants: [{ id: tenant }], apiKeys: [{ ...fileKey, ...definition }] });
    const grantEvents = async (id: string) =>
      (await streamOf(`apikey-${id}`)).map(({ type, data }) => {
        const { hash: _hash, prefix: _prefix, ...rest } = data as Json;
        return { type, data: rest };
      });
    expect(withoutIds(await grantEvents(viaApi), [viaApi])).toEqual(withoutIds(await grantEvents(viaFile), [viaFile]));
    const shape = (view: Json) => ({ tenant: view.tenant, scopes: view.scopes, aliases: view.aliases, limits: view.limits, expiresAt: view.expiresAt, budget: view.budget });
    const [apiView, fileView] = [(await admin.get(`/keys/${viaApi}`)).json, (await admin.get(`/keys/${viaFile}`)).json];
    expect(shape(apiView)).toEqual(shape(fileView));
    expect(path.split('.').reduce<any>((node, part) => node?.[part], apiView)).toEqual(GOOD.key[path]);

    // The same change to an existing key: PATCH with the member, the file applied again with it.
    const [member] = path.split('.');
    const laterApi = next('api-key');
    const laterFile = next('file-key');
    process.env[`PARITY_${counter}_KEY`] = generateApiKey();
    await admin.post('/keys', { id: laterApi, tenant });
    await apply({ tenants: [{ id: tenant }], apiKeys: [{ id: laterFile, tenant, key: `env:PARITY_${counter}_KEY` }] });
    const patched = await admin.patch(`/keys/${laterApi}`, { [member]: definition[member] });
    expect(patched.status).toBe(200);
    expect(patched.json.appended).toEqual(['ApiKeyUpdated']);
    await apply({ tenants: [{ id: tenant }], apiKeys: [{ id: laterFile, tenant, key: `env:PARITY_${counter}_KEY`, ...definition }] });
    expect(withoutIds(await grantEvents(laterApi), [laterApi])).toEqual(withoutIds(await grantEvents(laterFile), [laterFile]));
  });

  test('the file names a key\'s secret; the API generates it instead and refuses one sent', async () => {
    const before = await eventCount();
    process.env.PARITY_CHOSEN_KEY = generateApiKey();
    for (const key of ['env:PARITY_CHOSEN_KEY', process.env.PARITY_CHOSEN_KEY]) {
      const refused = await admin.post('/keys', { id: next('chosen'), tenant: 'acme', key });
      expect(expectRefused(refused, 'key').message).toBe(
        'the admin API makes the secret and answers it once; a secret of your own is declared in the configuration file (key: env:NAME or file:PATH)',
      );
      expect(refused.text).not.toContain(process.env.PARITY_CHOSEN_KEY);
    }
    expect(await eventCount()).toBe(before);
  });

  test.each(Object.keys(BAD.tenant))('tenant %s: a bad value is refused by the API (400 naming it, nothing appended) in the file\'s words', async (path) => {
    const definition = definitionWith(path, BAD.tenant[path]);
    const id = path === 'id' ? BAD.tenant.id : next('bad-tenant');
    const body = { id, ...definition };
    const before = await eventCount();
    const refused = expectRefused(await admin.post('/tenants', body), path);
    expect(refused.message).toBe(fileProblem({ tenants: [body] }, `tenants[0].${path}`));
    const [member, ...rest] = path.split('.');
    if (member === 'limits' || member === 'budget') {
      // The update endpoint takes the member itself: the path is within it.
      expect(expectRefused(await admin.put('/tenants/acme/' + member, definition[member]), rest.join('.')).message).toBe(refused.message);
    }
    expect(await eventCount()).toBe(before);
  });

  test.each(Object.keys(BAD.key))('key %s: a bad value is refused by the API (400 naming it, nothing appended) in the file\'s words', async (path) => {
    const definition = definitionWith(path, BAD.key[path]);
    const body = { id: next('bad-key'), tenant: 'acme', ...definition };
    const before = await eventCount();
    const where = PROBLEM_PATH[path] ?? path;
    const refused = expectRefused(await admin.post('/keys', body), where);
    const fileBody = { ...body, key: 'env:PARITY_WEBHOOK_KEY' };
    expect(refused.message).toBe(fileProblem({ tenants: [{ id: 'acme' }], apiKeys: [fileBody] }, `apiKeys[0].${where}`));
    if (path !== 'id' && path !== 'tenant') {
      const [member] = path.split('.');
      expect(expectRefused(await admin.patch('/keys/acme-app', { [member]: definition[member] }), where).message).toBe(refused.message);
    }
    expect(await eventCount()).toBe(before);
  });

  test('POST /config/apply with a file of problems: 422 with each problem\'s path apart from its words, nothing appended', async () => {
    const before = await eventCount();
    const yaml = 'aliases:\n  - name: broken\n    routes:\n      - { deployment: nowhere, priority: 0 }\ntenants:\n  - id: t-x\n    colour: blue\n';
    const refused = await admin.post('/config/apply', { yaml, dryRun: true });
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe('invalid_configuration');
    expect(refused.json.error.fields).toEqual(expect.arrayContaining([
      { path: 'aliases[0].routes[0].deployment', message: "names deployment 'nowhere', which this file does not declare (a file refers only to what it declares; `switchyard config export` writes the running definitions as one)" },
      { path: 'tenants[0].colour', message: expect.stringMatching(/^unknown field \(expected one of /) },
    ]));
    // The message still says it whole, as the CLI prints it.
    expect(refused.json.error.message).toContain("aliases[0].routes[0].deployment: names deployment 'nowhere', which this file does not declare (a file refers only to what it declares; `switchyard config export` writes the running definitions as one)");
    // A file that is not YAML at all has no path to give.
    const garbled = await admin.post('/config/apply', { yaml: 'aliases: [', dryRun: true });
    expect(garbled.status).toBe(422);
    expect(garbled.json.error.fields).toEqual([{ path: '', message: expect.stringContaining('not valid YAML') }]);
    expect(await eventCount()).toBe(before);
  });

  test('a webhook secret this node cannot resolve is refused on both paths, and nothing is appended', async () => {
    delete process.env.PARITY_UNSET_HOOK_KEY;
    const budget = { monthlyUsd: '5', webhook: { url: 'https://hooks.example.com/unset', secret: 'env:PARITY_UNSET_HOOK_KEY' } };
    const id = next('unresolvable');
    const before = await eventCount();
    for (const refused of [
      await admin.post('/tenants', { id, budget }),
      await admin.put('/tenants/acme/budget', budget),
      await admin.post('/keys', { id: next('unresolvable'), tenant: 'acme', budget }),
      await admin.patch('/keys/acme-app', { budget }),
    ]) {
      expect(refused.status).toBe(422);
      expect(refused.json.error).toMatchObject({ code: 'unresolvable_secret', message: expect.stringContaining('budget.webhook.secret: env:PARITY_UNSET_HOOK_KEY cannot be resolved') });
    }
    const file = await admin.post('/config/apply', { yaml: JSON.stringify({ tenants: [{ id, budget }] }) });
    expect(file.status).toBe(422);
    expect(file.json.error.message).toContain('tenants[0].budget.webhook.secret: env:PARITY_UNSET_HOOK_KEY cannot be resolved');
    expect(await eventCount()).toBe(before);
  });

  test.each(Object.keys(LIMITS_FIELDS))('limits.%s of a deployment and an alias: the same reader, the same words, nothing appended', async (name) => {
    const before = await eventCount();
    const deployment = { id: next('limited'), provider: 'mock-upstream', model: 'model-primary', capabilities: ['chat'], contextWindow: 1000, maxOutputTokens: 100 };
    const words = fileProblem({ tenants: [{ id: 't', limits: { [name]: 0 } }] }, `tenants[0].limits.${name}`);
    expect(expectRefused(await admin.post('/deployments', { ...deployment, limits: { [name]: 0 } }), `limits.${name}`).message).toBe(words);
    expect(expectRefused(await admin.put(`/aliases/${next('limited')}`, { routes: [{ deployment: 'primary' }], policy: { limits: { [name]: 0 } } }), `policy.limits.${name}`).message)
      .toBe(words);
    expect(await eventCount()).toBe(before);
    const registered = await admin.post('/deployments', { ...deployment, limits: { [name]: 7 } });
    expect(registered.status).toBe(201);
    expect(registered.json.limits[name]).toBe(7);
  });

  test('POST /tenants with a budget, once refused as `budget: unknown field`, creates the tenant with it in one append', async () => {
    const id = next('budgeted');
    const created = await admin.post('/tenants', { id, name: 'Budgeted', limits: { rpm: 10 }, budget: { dailyUsd: '3' } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ id, name: 'Budgeted', limits: { rpm: 10, tpm: null, maxConcurrency: null }, budget: { dailyUsd: '3', softPct: 80, enforcement: 'hard' } });
    expect(created.json.appended).toEqual(['TenantCreated', 'TenantLimitsSet', 'TenantBudgetSet']);
    const events = await gw.gateway.platform.store.readStream(`tenant-${id}`);
    expect(new Set(events.map((e) => String(e.transactionId))).size).toBe(1);
    // The same creation again changes nothing; a different budget is a change for PUT …/budget.
    expect((await admin.post('/tenants', { id, name: 'Budgeted', limits: { rpm: 10 }, budget: { dailyUsd: '3' } })).status).toBe(200);
    expect((await admin.post('/tenants', { id, name: 'Budgeted', budget: { dailyUsd: '4' } })).json.error.code).toBe('tenant_exists');
    // A budget the decider refuses (a webhook at a cloud metadata address) appends nothing, not even the tenant.
    const refusedId = next('budgeted');
    const refused = await admin.post('/tenants', { id: refusedId, budget: { monthlyUsd: '5', webhook: { url: 'http://169.254.169.254/hook', secret: 'env:PARITY_WEBHOOK_KEY' } } });
    expect(refused.status).toBe(422);
    expect((await admin.get(`/tenants/${refusedId}`)).status).toBe(404);
  });
});
