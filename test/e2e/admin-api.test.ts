import { Decimal } from 'decimal.js';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AttemptFinished } from '../../events/request-events.js';
import { KEY_PATTERN } from '../../modules/access/api-key/key-format.js';
import { KeyExpirySweeper } from '../../modules/access/api-key/key-expiry-sweeper.js';
import { AdminClient, waitUntil } from '../support/admin-client.js';
import { secretReferencePolicy } from '../../src/kernel/secret-references/secret-reference-policy.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';
import { canonicalJson } from '../../src/kernel/canonical-json.js';

const ADMIN_TOKEN = 'e2e-admin-token-0123456789abcdef';
const hello = { model: 'chat', messages: [{ role: 'user', content: 'Hello, admin test' }] };

describe('admin API /admin/v1', () => {
  let gw: TestGateway;
  let admin: AdminClient;
  let secretsDir: string;

  beforeAll(async () => {
    process.env.ADMIN_E2E_SECOND_PROVIDER_KEY = 'second-provider-secret-value-98765';
    // Set in this process too, so refusing env:ADMIN_TOKEN is about the policy, not about a missing variable.
    process.env.ADMIN_TOKEN = ADMIN_TOKEN;
    secretsDir = mkdtempSync(join(tmpdir(), 'switchyard-admin-secrets-'));
    writeFileSync(join(secretsDir, 'vllm-key'), 'file-held-provider-key-24680\n');
    symlinkSync('/etc/hostname', join(secretsDir, 'hostname-link'));
    gw = await startTestGateway({
      environment: { adminToken: ADMIN_TOKEN, secretReferences: secretReferencePolicy({ SWITCHYARD_SECRETS_DIR: secretsDir }, null) },
    });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
  });
  afterAll(async () => {
    await gw.close();
    rmSync(secretsDir, { recursive: true, force: true });
  });

  async function eventCount(): Promise<number> {
    const rows = await gw.gateway.platform.database.query<{ n: string }>(`SELECT count(*)::text AS n FROM events`);
    return Number(rows[0].n);
  }

  async function streamEvents(streamId: string) {
    return gw.gateway.platform.store.readStream(streamId);
  }

  async function chat(key: string, body: unknown = hello) {
    return postJson(gw, '/v1/chat/completions', body, { authorization: `Bearer ${key}` });
  }

  /** Every validation error lists field paths; the test names the paths it expects. */
  function expectFields(response: { status: number; json: any }, paths: string[]): void {
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('validation_failed');
    expect(response.json.error.fields.map((f: { path: string }) => f.path).sort()).toEqual([...paths].sort());
    for (const field of response.json.error.fields) expect(field.message).toEqual(expect.any(String));
  }

  describe('authentication', () => {
    test('without a token: 401 in the admin envelope, with WWW-Authenticate', async () => {
      const response = await admin.withToken(null).get('/providers');
      expect(response.status).toBe(401);
      expect(response.json).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(response.headers.get('x-request-id')).toBeTruthy();
    });

    test('a wrong token is 401 and the answer never echoes it', async () => {
      const wrong = 'not-the-admin-token-but-a-guess-12345';
      for (const client of [admin.withToken(wrong), admin.withToken(`${ADMIN_TOKEN}x`)]) {
        const response = await client.post('/tenants', { id: 'never' });
        expect(response.status).toBe(401);
        expect(response.text).not.toContain(wrong);
      }
      expect((await admin.get('/tenants/never')).status).toBe(404);
    });

    test('every admin route is protected', async () => {
      const anonymous = admin.withToken(null);
      const routes: Array<[string, string]> = [
        ['GET', '/status'], ['GET', '/providers'], ['POST', '/providers'], ['PUT', '/providers/mock-upstream'], ['DELETE', '/providers/mock-upstream'],
        ['GET', '/deployments'], ['POST', '/deployments/primary/disable'], ['GET', '/deployments/primary/prices'], ['POST', '/deployments/primary/prices'],
        ['GET', '/aliases'], ['PUT', '/aliases/chat'], ['POST', '/aliases/chat/retire'], ['GET', '/tenants'], ['POST', '/tenants/acme/suspend'],
        ['GET', '/keys'], ['POST', '/keys'], ['POST', '/keys/acme-app/revoke'],
      ];
      const before = await eventCount();
      for (const [method, path] of routes) {
        const response = await anonymous.send(method, path, method === 'GET' || method === 'DELETE' ? undefined : {});
        expect({ method, path, status: response.status }).toEqual({ method, path, status: 401 });
      }
      expect(await eventCount()).toBe(before);
    });

    test('a gateway key without an admin scope is 403; one with admin:platform is accepted and recorded as the actor', async () => {
      const plain = await admin.withToken(gw.key).get('/status');
      expect(plain.status).toBe(403);
      expect(plain.json.error.code).toBe('insufficient_scope');
      const issued = await admin.post('/keys', { id: 'ops-robot', tenant: 'acme', scopes: ['admin:platform'] });
      expect(issued.status).toBe(201);
      const robot = admin.withToken(issued.json.key);
      expect((await robot.get('/status')).status).toBe(200);
      const created = await robot.post('/tenants', { id: 'robot-made', name: 'Made by a robot' });
      expect(created.status).toBe(201);
      expect((await streamEvents('tenant-robot-made'))[0].metadata.actor).toBe('key:ops-robot');
      await admin.post('/keys/ops-robot/revoke', { reason: 'test over' });
      expect((await robot.get('/status')).status).toBe(401);
    });

    test('a key with the admin scope administers its own tenant only (test/e2e/tenant-admin-scope.test.ts has every route)', async () => {
      const issued = await admin.post('/keys', { id: 'acme-robot', tenant: 'acme', scopes: ['admin'] });
      expect(issued.status).toBe(201);
      const robot = admin.withToken(issued.json.key);
      const before = await eventCount();
      const status = await robot.get('/status');
      expect({ status: status.status, code: status.json.error.code }).toEqual({ status: 403, code: 'platform_scope_required' });
      expect((await robot.post('/tenants', { id: 'robot-made-too' })).status).toBe(403);
      expect((await robot.get('/tenants')).json.data.map((t: { id: string }) => t.id)).toEqual(['acme']);
      expect((await robot.get('/tenants/acme')).status).toBe(200);
      expect(await eventCount()).toBe(before);
      await admin.post('/keys/acme-robot/revoke', { reason: 'test over' });
    });

    test('unknown admin routes and malformed JSON answer in the admin envelope, not a client format', async () => {
      const missing = await admin.get('/nothing-here');
      expect(missing.status).toBe(404);
      expect(missing.json).toEqual({ error: { code: 'not_found', message: expect.stringContaining('/admin/v1/nothing-here') } });
      const malformed = await admin.post('/tenants', '{"id": "x",');
      expect(malformed.status).toBe(400);
      expect(malformed.json).toEqual({ error: { code: 'invalid_json', message: expect.any(String) } });
    });
  });

  test('GET /status shows the node, its snapshot and key-index versions and every projection', async () => {
    const response = await admin.get('/status');
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({
      nodeId: expect.any(String),
      snapshot: { version: expect.any(Number), aliases: 2, deployments: 2, problems: [] },
      keyIndex: { version: expect.any(Number) },
      eventLog: { head: expect.any(Number) },
    });
    expect(response.json.snapshot.version).toBeGreaterThan(0);
    expect(response.json.projections.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['routing-snapshot', 'key-index', 'cost-ledger']));
  });

  describe('providers', () => {
    const second = { id: 'second', type: 'openai-compatible', baseUrl: 'https://llm.internal.example.com/v1', apiKey: 'env:ADMIN_E2E_SECOND_PROVIDER_KEY' };

    test('reads show the credential reference, never the credential', async () => {
      const list = await admin.get('/providers');
      expect(list.status).toBe(200);
      expect(list.json.data).toEqual([expect.objectContaining({ id: 'mock-upstream', status: 'active', type: 'openai-compatible', apiKey: 'env:SY_TEST_UPSTREAM_KEY', version: 1 })]);
      expect(list.text).not.toContain(process.env.SY_TEST_UPSTREAM_KEY!);
      const one = await admin.get('/providers/mock-upstream');
      expect(one.headers.get('etag')).toBe('"1"');
      expect((await admin.get('/providers/ghost')).json.error.code).toBe('provider_not_found');
    });

    test('register: 201 with ETag and the actor in metadata; the same again appends nothing; a different duplicate is 422', async () => {
      const created = await admin.post('/providers', second);
      expect(created.status).toBe(201);
      expect(created.headers.get('etag')).toBe('"1"');
      expect(created.json).toMatchObject({ id: 'second', status: 'active', apiKey: 'env:ADMIN_E2E_SECOND_PROVIDER_KEY', appended: ['ProviderRegistered'] });
      const [event] = await streamEvents('provider-second');
      expect(event.metadata).toMatchObject({ actor: 'admin:env', correlationId: created.headers.get('x-request-id') });
      expect(canonicalJson(event)).not.toContain('second-provider-secret-value');

      const again = await admin.post('/providers', second);
      expect(again.status).toBe(200);
      expect(again.json.appended).toEqual([]);
      const duplicate = await admin.post('/providers', { ...second, baseUrl: 'https://other.example.com/v1' });
      expect(duplicate.status).toBe(422);
      expect(duplicate.json.error.code).toBe('provider_exists');
    });

    test('validation errors name the field paths, and never echo a literal secret', async () => {
      expectFields(await admin.post('/providers', {}), ['id', 'type']);
      expectFields(await admin.post('/providers', { ...second, type: 'openia', colour: 'blue' }), ['type', 'colour']);
      const literal = await admin.post('/providers', { ...second, apiKey: 'sk-live-literal-secret-abcdef' });
      expectFields(literal, ['apiKey']);
      expect(literal.text).not.toContain('sk-live-literal-secret-abcdef');
      expectFields(await admin.post('/providers', { ...second, allowPrivateNetwork: 'yes', id: 'has space' }), ['allowPrivateNetwork', 'id']);
    });

    test('unsafe base URLs and unresolvable secrets are refused with 422 and append nothing', async () => {
      const before = await eventCount();
      const withPassword = await admin.post('/providers', { ...second, id: 'leaky', baseUrl: 'https://root:pa55w0rd-in-url@llm.example.com/v1' });
      expect(withPassword.status).toBe(422);
      expect(withPassword.json.error.code).toBe('invalid_provider');
      expect(withPassword.text).not.toContain('pa55w0rd-in-url');
      const metadata = await admin.post('/providers', { ...second, id: 'imds', baseUrl: 'http://169.254.169.254/latest', allowPrivateNetwork: true });
      expect(metadata.status).toBe(422);
      const scheme = await admin.post('/providers', { ...second, id: 'ftp', baseUrl: 'ftp://llm.example.com/' });
      expect(scheme.status).toBe(422);
      const missingSecret = await admin.post('/providers', { ...second, id: 'nokey', apiKey: 'env:ADMIN_E2E_NOT_SET_ANYWHERE' });
      expect(missingSecret.status).toBe(422);
      expect(missingSecret.json.error).toMatchObject({ code: 'unsafe_publication', message: expect.stringContaining('ADMIN_E2E_NOT_SET_ANYWHERE') });
      expect(await eventCount()).toBe(before);
    });

    test('secret references read only allowed variables and the secrets directory, refused with one message whatever exists', async () => {
      const before = await eventCount();
      const refusal = async (apiKey: string) => {
        const response = await admin.post('/providers', { id: 'exfil', type: 'openai-compatible', baseUrl: 'https://collector.example.com/v1', apiKey });
        expect({ apiKey, status: response.status }).toEqual({ apiKey, status: 422 });
        expect(response.text).not.toContain(ADMIN_TOKEN);
        return (response.json.error.message as string).replace(apiKey, '<ref>');
      };
      const unsetEnv = await refusal('env:ADMIN_E2E_NOT_SET_ANYWHERE_KEY');
      for (const ref of ['env:ADMIN_TOKEN', 'env:DATABASE_URL', 'env:REDIS_URL', 'env:CLICKHOUSE_URL', 'env:SWITCHYARD_DATA_DIR', 'env:PATH', 'env:HOME']) {
        expect({ ref, message: await refusal(ref) }).toEqual({ ref, message: unsetEnv });
      }
      const missingFile = await refusal(`file:${join(secretsDir, 'missing')}`);
      for (const ref of ['file:/etc/passwd', 'file:/etc/hostname', 'file:/nonexistent/secret', `file:${join(secretsDir, 'hostname-link')}`, `file:${secretsDir}/../etc/passwd`]) {
        expect({ ref, message: await refusal(ref) }).toEqual({ ref, message: missingFile });
      }
      expect(await eventCount()).toBe(before);
      const fromDirectory = await admin.post('/providers', {
        id: 'vllm-file', type: 'openai-compatible', baseUrl: 'https://vllm.example.com/v1', apiKey: `file:${join(secretsDir, 'vllm-key')}`,
      });
      expect(fromDirectory.status).toBe(201);
      expect(fromDirectory.text).not.toContain('file-held-provider-key');
    });

    test('the bypass URLs of the outbound policy are refused; loopback needs allowPrivateNetwork', async () => {
      const before = await eventCount();
      for (const baseUrl of ['http://[::ffff:169.254.169.254]/', 'http://[::ffff:a9fe:a9fe]/', 'http://169.254.169.254.nip.io/', 'http://metadata.google.internal./', 'http://2852039166/']) {
        for (const allowPrivateNetwork of [false, true]) {
          const response = await admin.post('/providers', { ...second, id: 'bypass', baseUrl, allowPrivateNetwork });
          expect({ baseUrl, allowPrivateNetwork, status: response.status, code: response.json.error?.code }).toEqual({ baseUrl, allowPrivateNetwork, status: 422, code: 'invalid_provider' });
        }
      }
      const loopback = await admin.post('/providers', { ...second, id: 'local-vllm', baseUrl: 'http://127.0.0.1:8000/v1' });
      expect(loopback.status).toBe(422);
      expect(loopback.json.error.message).toContain('allowPrivateNetwork');
      expect(await eventCount()).toBe(before);
      expect((await admin.post('/providers', { ...second, id: 'local-vllm', baseUrl: 'http://127.0.0.1:8000/v1', allowPrivateNetwork: true })).status).toBe(201);
    });

    test('a gateway key, even with the admin:platform scope, cannot register or update a provider; it may read them', async () => {
      const issued = await admin.post('/keys', { id: 'ops-robot-providers', tenant: 'acme', scopes: ['admin:platform'] });
      expect(issued.status).toBe(201);
      const robot = admin.withToken(issued.json.key);
      const before = await eventCount();
      const register = await robot.post('/providers', { id: 'robot-provider', type: 'openai-compatible', baseUrl: 'https://collector.example.com/v1', apiKey: 'env:ADMIN_E2E_SECOND_PROVIDER_KEY' });
      expect(register.status).toBe(403);
      expect(register.json.error.code).toBe('admin_token_required');
      const update = await robot.put('/providers/mock-upstream', { type: 'openai-compatible', baseUrl: 'https://collector.example.com/v1', apiKey: 'env:ADMIN_E2E_SECOND_PROVIDER_KEY' });
      expect(update.status).toBe(403);
      expect(update.json.error.code).toBe('admin_token_required');
      // Refused before the body is validated: a malformed body gets the same answer.
      expect((await robot.post('/providers', { nonsense: true })).status).toBe(403);
      expect(await eventCount()).toBe(before);
      expect((await robot.get('/providers')).status).toBe(200);
      expect((await admin.get('/providers/mock-upstream')).json.baseUrl).toBe(`${gw.mockUrl}/v1`);
      await admin.post('/keys/ops-robot-providers/revoke', { reason: 'test over' });
    });

    test('update honours If-Match: a stale version is 409 and changes nothing', async () => {
      const stale = await admin.put('/providers/second', { ...second, id: undefined, region: 'eu' }, { 'if-match': '"7"' });
      expect(stale.status).toBe(409);
      expect(stale.json.error.code).toBe('version_conflict');
      const current = await admin.get('/providers/second');
      const updated = await admin.put('/providers/second', { type: 'openai-compatible', baseUrl: second.baseUrl, apiKey: second.apiKey, region: 'eu' }, { 'if-match': current.headers.get('etag')! });
      expect(updated.status).toBe(200);
      expect(updated.headers.get('etag')).toBe('"2"');
      expect(updated.json).toMatchObject({ region: 'eu', version: 2, appended: ['ProviderUpdated'] });
      const bad = await admin.put('/providers/second', { type: 'openai-compatible', baseUrl: second.baseUrl }, { 'if-match': 'yesterday' });
      expect(bad.status).toBe(400);
      expect(bad.json.error.code).toBe('invalid_if_match');
    });

    test('remove: a provider serving an alias cannot be removed; an unused one can, once', async () => {
      const serving = await admin.delete('/providers/mock-upstream');
      expect(serving.status).toBe(422);
      expect(serving.json.error.code).toBe('unsafe_publication');
      const removed = await admin.delete('/providers/second?reason=unused');
      expect(removed.status).toBe(200);
      expect(removed.json).toMatchObject({ status: 'removed', appended: ['ProviderRemoved'] });
      const twice = await admin.delete('/providers/second');
      expect(twice.status).toBe(409);
      expect(twice.json.error.code).toBe('provider_removed');
      expect((await admin.delete('/providers/ghost')).status).toBe(404);
    });
  });

  describe('deployments and prices', () => {
    const spare = {
      id: 'spare', provider: 'mock-upstream', model: 'model-spare', region: 'eu', capabilities: ['chat', 'streaming'],
      contextWindow: 32000, maxOutputTokens: 2048, quotaGroup: 'mock-pool', limits: { rpm: 100 },
    };

    test('register, read, update, disable, enable; invalid transitions are refused', async () => {
      const created = await admin.post('/deployments', spare);
      expect(created.status).toBe(201);
      expect(created.json).toMatchObject({
        id: 'spare', status: 'active', provider: 'mock-upstream', region: 'eu', quotaGroup: 'mock-pool',
        limits: { rpm: 100, tpm: null, maxConcurrency: null }, price: null, version: 1,
      });
      const list = await admin.get('/deployments');
      expect(list.json.data.map((d: { id: string }) => d.id).sort()).toEqual(['backup', 'primary', 'spare']);
      const primary = await admin.get('/deployments/primary');
      expect(primary.json.price).toMatchObject({ priceVersion: 1, inputPer1M: '2.50', outputPer1M: '10.00', status: 'in-effect' });

      const { id: _id, ...settings } = spare;
      const updated = await admin.put('/deployments/spare', { ...settings, capabilities: ['chat', 'streaming', 'tools'] }, { 'if-match': '"1"' });
      expect(updated.json).toMatchObject({ capabilities: ['chat', 'streaming', 'tools'], version: 2 });
      expect((await admin.post('/deployments/spare/disable', { reason: 'maintenance' })).json).toMatchObject({ status: 'disabled' });
      const again = await admin.post('/deployments/spare/disable');
      expect(again.status).toBe(409);
      expect(again.json.error.code).toBe('deployment_already_disabled');
      expect((await admin.post('/deployments/spare/enable')).json).toMatchObject({ status: 'active', version: 4 });
      expect((await admin.post('/deployments/ghost/enable')).status).toBe(404);
      expect((await admin.post('/deployments', { ...spare, provider: 'ghost-provider', id: 'orphan' })).status).toBe(422);
    });

    test('validation errors name nested paths', async () => {
      expectFields(await admin.post('/deployments', { ...spare, capabilities: ['chat', 'mind-reading'], limits: { rpm: 0, burst: 5 } }),
        ['capabilities', 'limits.rpm', 'limits.burst']);
      expectFields(await admin.post('/deployments', { id: 'x' }), ['provider', 'model', 'capabilities', 'contextWindow', 'maxOutputTokens']);
      const tooLong = await admin.post('/deployments', { ...spare, id: 'big', contextWindow: 1000, maxOutputTokens: 4000 });
      expect(tooLong.status).toBe(422);
      expect(tooLong.json.error.code).toBe('invalid_deployment');
    });

    test('prices: schedule with history, never edited; a past start, a bad decimal or a missing deployment is refused', async () => {
      const first = await admin.post('/deployments/spare/prices', { inputPer1M: '1.00', outputPer1M: '3.00' });
      expect(first.status).toBe(201);
      expect(first.json.current).toMatchObject({ priceVersion: 1, inputPer1M: '1.00', status: 'in-effect' });
      const future = new Date(Date.now() + 86_400_000).toISOString();
      const next = await admin.post('/deployments/spare/prices', { effectiveFrom: future, inputPer1M: '0.80', outputPer1M: '2.40', cachedInputPer1M: '0.40' });
      expect(next.json.history).toEqual([
        expect.objectContaining({ priceVersion: 1, status: 'in-effect', inputPer1M: '1.00' }),
        expect.objectContaining({ priceVersion: 2, status: 'scheduled', effectiveFrom: future, cachedInputPer1M: '0.40' }),
      ]);
      const history = await admin.get('/deployments/spare/prices');
      expect(history.headers.get('etag')).toBe('"2"');
      expect(history.json.current.priceVersion).toBe(1);

      const edit = await admin.post('/deployments/spare/prices', { effectiveFrom: future, inputPer1M: '0.70', outputPer1M: '2.40' });
      expect(edit.status).toBe(409);
      expect(edit.json.error.code).toBe('price_exists');
      const past = await admin.post('/deployments/spare/prices', { effectiveFrom: '2020-01-01T00:00:00Z', inputPer1M: '1', outputPer1M: '1' });
      expect(past.status).toBe(422);
      expect(past.json.error.code).toBe('price_in_past');
      expectFields(await admin.post('/deployments/spare/prices', { inputPer1M: 0.1, outputPer1M: '1,5', currency: 'EUR' }), ['inputPer1M', 'outputPer1M', 'currency']);
      const nowhere = await admin.post('/deployments/nowhere/prices', { inputPer1M: '1', outputPer1M: '1' });
      expect(nowhere.status).toBe(422);
      expect(nowhere.json.error.code).toBe('unsafe_publication');
      expect((await admin.get('/deployments/nowhere/prices')).status).toBe(404);
      const events = await streamEvents('price-spare');
      expect(events.map((e) => e.type)).toEqual(['PriceScheduled', 'PriceScheduled']);
    });

    test('a future price takes effect at its time, with no restart', async () => {
      const first = await chat(gw.key);
      const before = (await gw.requestEvents(first.headers.get('x-request-id')!)).find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];
      expect(before).toMatchObject({ deploymentId: 'primary', priceVersion: 1 });

      const startsAt = new Date(Date.now() + 1500);
      const scheduled = await admin.post('/deployments/primary/prices', { effectiveFrom: startsAt.toISOString(), inputPer1M: '5.00', outputPer1M: '20.00' });
      expect(scheduled.status).toBe(201);
      const stillOld = await chat(gw.key);
      expect(((await gw.requestEvents(stillOld.headers.get('x-request-id')!)).find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data']).priceVersion).toBe(1);

      await new Promise((resolve) => setTimeout(resolve, Math.max(0, startsAt.getTime() - Date.now()) + 50));
      const after = await chat(gw.key);
      const attempt = (await gw.requestEvents(after.headers.get('x-request-id')!)).find((e) => e.type === 'AttemptFinished')!.data as AttemptFinished['data'];
      expect(attempt.priceVersion).toBe(2);
      const expected = new Decimal(attempt.usage.input).times('5.00').plus(new Decimal(attempt.usage.output).times('20.00')).div(1_000_000);
      expect(attempt.cost.total).toBe(expected.toFixed(12));
      expect((await admin.get('/deployments/primary')).json.price).toMatchObject({ priceVersion: 2, inputPer1M: '5.00' });
    });

    test('retire: refused while an alias routes to it; allowed when unused, and final', async () => {
      const used = await admin.post('/deployments/primary/retire');
      expect(used.status).toBe(422);
      expect(used.json.error.message).toContain('primary is retired');
      const retired = await admin.post('/deployments/spare/retire', { reason: 'sunset' });
      expect(retired.json).toMatchObject({ status: 'retired', appended: ['DeploymentRetired'] });
      expect((await admin.post('/deployments/spare/enable')).json.error.code).toBe('deployment_retired');
    });
  });

  describe('aliases', () => {
    const definition = { strategy: 'priority', routes: [{ deployment: 'backup', priority: 0 }], policy: { requiredCapabilities: ['chat'] } };

    test('reads show the declared version and the served one with resolved routes, never credentials or URLs of secrets', async () => {
      const chatAlias = await admin.get('/aliases/chat');
      expect(chatAlias.status).toBe(200);
      expect(chatAlias.headers.get('etag')).toBe('"1"');
      expect(chatAlias.json).toMatchObject({
        name: 'chat', status: 'published', aliasVersion: 1, visibility: 'public', problems: [],
        routes: [{ deployment: 'primary', priority: 0, weight: 1 }, { deployment: 'backup', priority: 1, weight: 1 }],
        serving: { aliasVersion: 1, routes: [expect.objectContaining({ deployment: 'primary', provider: 'mock-upstream', model: 'model-primary', status: 'active' }), expect.objectContaining({ deployment: 'backup' })] },
      });
      expect(chatAlias.text).not.toContain(process.env.SY_TEST_UPSTREAM_KEY!);
      expect((await admin.get('/aliases')).json.data.map((a: { name: string }) => a.name).sort()).toEqual(['chat', 'solo']);
    });

    test('publish: version 1 is 201, the same definition appends nothing, a change is the next version and serves at once', async () => {
      const created = await admin.put('/aliases/cheap', definition);
      expect(created.status).toBe(201);
      expect(created.json).toMatchObject({ aliasVersion: 1, serving: { aliasVersion: 1 }, appended: ['AliasPublished'] });
      expect((await chat(gw.key, { ...hello, model: 'cheap' })).status).toBe(200);
      const same = await admin.put('/aliases/cheap', definition);
      expect(same.status).toBe(200);
      expect(same.json.appended).toEqual([]);
      const changed = await admin.put('/aliases/cheap', { ...definition, routes: [{ deployment: 'backup', weight: 5 }] }, { 'if-match': '"1"' });
      expect(changed.json).toMatchObject({ aliasVersion: 2, routes: [{ deployment: 'backup', weight: 5 }], serving: { aliasVersion: 2 } });
      const stale = await admin.put('/aliases/cheap', { ...definition, strategy: 'weighted' }, { 'if-match': '"1"' });
      expect(stale.status).toBe(409);
      expect(stale.json.error.code).toBe('version_conflict');
    });

    test('a publication that would break serving is 422, appends nothing, and the previous version keeps serving', async () => {
      await admin.post('/deployments', { id: 'parked', provider: 'mock-upstream', model: 'model-parked', capabilities: ['chat'], contextWindow: 8000, maxOutputTokens: 1000 });
      await admin.post('/deployments/parked/prices', { inputPer1M: '1', outputPer1M: '1' });
      await admin.post('/deployments/parked/disable');
      const snapshotBefore = (await admin.get('/status')).json.snapshot.version;
      const before = await eventCount();
      const cases: Array<[string, unknown, RegExp]> = [
        ['a missing deployment', { routes: [{ deployment: 'ghost' }] }, /ghost, which does not exist/],
        ['a retired deployment', { routes: [{ deployment: 'spare' }] }, /spare is retired/],
        ['a disabled deployment', { routes: [{ deployment: 'backup' }, { deployment: 'parked', priority: 1 }] }, /parked, which is disabled/],
        ['a missing capability', { routes: [{ deployment: 'backup' }], policy: { requiredCapabilities: ['vision'] } }, /backup lacks vision/],
      ];
      for (const [name, body, message] of cases) {
        const response = await admin.put('/aliases/cheap', body);
        expect({ name, status: response.status, code: response.json.error.code }).toEqual({ name, status: 422, code: 'unsafe_publication' });
        expect(response.json.error.message).toMatch(message);
      }
      expect(await eventCount()).toBe(before);
      expect((await admin.get('/status')).json.snapshot.version).toBe(snapshotBefore);
      expect((await admin.get('/aliases/cheap')).json).toMatchObject({ aliasVersion: 2, serving: { aliasVersion: 2 } });
      expect((await chat(gw.key, { ...hello, model: 'cheap' })).status).toBe(200);
    });

    test('validation errors name the route that is wrong', async () => {
      expectFields(await admin.put('/aliases/cheap', { strategy: 'random', routes: [{ deployment: 'backup' }, { deployment: 'primary', weight: -1, priority: 1.5 }] }),
        ['strategy', 'routes[1].weight', 'routes[1].priority']);
      expectFields(await admin.put('/aliases/cheap', { routes: [] }), ['routes']);
      expectFields(await admin.put('/aliases/cheap', { routes: [{}], visibility: 'secret', policy: { maxAttempts: 0, limits: { maxConcurrency: 0 } } }),
        ['routes[0].deployment', 'visibility', 'policy.maxAttempts', 'policy.limits.maxConcurrency']);
      const duplicate = await admin.put('/aliases/cheap', { routes: [{ deployment: 'backup' }, { deployment: 'backup', priority: 1 }] });
      expect(duplicate.status).toBe(422);
      expect(duplicate.json.error.code).toBe('invalid_alias');
    });

    test('a canary is published in the YAML\'s words and checked like the YAML', async () => {
      const body = { strategy: 'sticky', routes: [{ deployment: 'primary' }, { deployment: 'backup', priority: 1 }], policy: { canary: { deployment: 'backup', percent: 2.5 } } };
      const published = await admin.put('/aliases/canaried', body);
      expect(published.status).toBe(201);
      expect(published.json.policy.canary).toEqual({ deployment: 'backup', percent: 2.5, salt: '' });
      const event = (await streamEvents('alias-canaried'))[0];
      expect((event.data as { policy: unknown }).policy).toMatchObject({ canary: { deploymentId: 'backup', percent: 2.5, salt: '' } });
      expect((await admin.put('/aliases/canaried', body)).json.appended).toEqual([]);
      const outside = await admin.put('/aliases/canaried', { ...body, policy: { canary: { deployment: 'elsewhere', percent: 5 } } });
      expect(outside.status).toBe(422);
      expect(outside.json.error.code).toBe('invalid_alias');
      expectFields(await admin.put('/aliases/canaried', { ...body, policy: { canary: { deployment: 'backup', percent: 120, share: 1 } } }),
        ['policy.canary.percent', 'policy.canary.share']);
      // A concurrency limit is stored in the policy as given, and shown the same way.
      const capped = await admin.put('/aliases/canaried', { ...body, policy: { ...body.policy, limits: { maxConcurrency: 4 } } });
      expect(capped.json.policy.limits).toEqual({ maxConcurrency: 4 });
      expect(((await streamEvents('alias-canaried')).at(-1)!.data as { policy: unknown }).policy).toMatchObject({ limits: { maxConcurrency: 4 } });
      expect((await admin.post('/aliases/canaried/retire')).status).toBe(200);
    });

    test('retire: the alias stops serving; retiring twice is refused', async () => {
      const retired = await admin.post('/aliases/cheap/retire', { reason: 'replaced' });
      expect(retired.json).toMatchObject({ status: 'retired', serving: null });
      expect((await chat(gw.key, { ...hello, model: 'cheap' })).status).toBe(404);
      const twice = await admin.post('/aliases/cheap/retire');
      expect(twice.status).toBe(409);
      expect(twice.json.error.code).toBe('alias_already_retired');
      expect((await admin.post('/aliases/ghost/retire')).status).toBe(404);
    });
  });

  describe('tenants', () => {
    test('create, limits, budget with current spend, suspend and reinstate', async () => {
      const created = await admin.post('/tenants', { id: 'globex', name: 'Globex' });
      expect(created.status).toBe(201);
      expect(created.json).toMatchObject({
        id: 'globex', name: 'Globex', status: 'active', budget: null,
        spend: { day: { spentUsd: '0' }, month: { spentUsd: '0' }, budgetUsedPct: null }, version: 1,
      });
      expect((await admin.put('/tenants/globex/limits', { rpm: 60, tpm: 10000 })).json.limits).toEqual({ rpm: 60, tpm: 10000, maxConcurrency: null });
      const budget = await admin.put('/tenants/globex/budget', { monthlyUsd: '100', softPct: 75 });
      expect(budget.json).toMatchObject({ budget: { monthlyUsd: '100', softPct: 75, enforcement: 'hard' }, spend: { budgetUsedPct: 0 } });
      expect((await admin.delete('/tenants/globex/budget')).json.budget).toBeNull();
      expect((await admin.post('/tenants/globex/suspend', { reason: 'review' })).json.status).toBe('suspended');
      expect((await admin.post('/tenants/globex/suspend')).json.error.code).toBe('tenant_already_suspended');
      expect((await admin.post('/tenants/globex/reinstate')).json.status).toBe('active');
      expect((await admin.post('/tenants/globex/reinstate')).json.error.code).toBe('tenant_not_suspended');
      expect((await admin.post('/tenants', { id: 'globex', name: 'Other' })).status).toBe(422);
      expect((await admin.put('/tenants/nobody/limits', { rpm: 1 })).status).toBe(404);
    });

    test('reads include the spend recorded by the ledger', async () => {
      await chat(gw.key);
      await gw.gateway.platform.committer.drain();
      await gw.gateway.platform.runner.catchUp(['cost-ledger']);
      const acme = await admin.get('/tenants/acme');
      expect(new Decimal(acme.json.spend.month.spentUsd).gt(0)).toBe(true);
      expect(acme.json.spend.day.spentUsd).toBe(acme.json.spend.month.spentUsd);
      const rows = await gw.gateway.platform.database.query<{ total: string }>(`SELECT sum(cost_usd)::text AS total FROM cost_ledger WHERE tenant_id = 'acme'`);
      expect(new Decimal(acme.json.spend.month.spentUsd).eq(rows[0].total)).toBe(true);
      expect((await admin.get('/tenants')).json.data.map((t: { id: string }) => t.id)).toEqual(expect.arrayContaining(['acme', 'globex']));
    });

    test('a suspended tenant\'s keys are refused at once', async () => {
      await admin.post('/tenants/acme/suspend');
      expect((await chat(gw.key)).status).toBe(403);
      await admin.post('/tenants/acme/reinstate');
      expect((await chat(gw.key)).status).toBe(200);
    });

    test('validation errors', async () => {
      expectFields(await admin.post('/tenants', { id: '../etc', name: 42 }), ['id', 'name']);
      expectFields(await admin.put('/tenants/globex/budget', { monthlyUsd: 'lots', softPct: 120, enforcement: 'sometimes' }), ['monthlyUsd', 'softPct', 'enforcement']);
      expectFields(await admin.put('/tenants/globex/limits', { rpm: -1, qps: 3 }), ['rpm', 'qps']);
    });
  });

  describe('keys', () => {
    test('issue shows the plaintext exactly once; it works at once; reads show only the prefix', async () => {
      const before = admin.transcript.length;
      const issued = await admin.post('/keys', { id: 'globex-app', tenant: 'globex', aliases: ['solo'], limits: { rpm: 30 } });
      expect(issued.status).toBe(201);
      expect(issued.headers.get('cache-control')).toBe('no-store');
      const key: string = issued.json.key;
      expect(key).toMatch(KEY_PATTERN);
      expect(issued.json).toMatchObject({
        id: 'globex-app', tenant: 'globex', prefix: key.slice(0, 10) + '…', status: 'active', scopes: ['inference', 'models:read'],
        aliases: ['solo'], limits: { rpm: 30, tpm: null, maxConcurrency: null }, expiresAt: null, version: 1,
      });
      expect(issued.json).not.toHaveProperty('hash');

      expect((await chat(key, { ...hello, model: 'solo' })).status).toBe(200);
      expect((await chat(key)).status).toBe(404); // not on the allowlist: as if it did not exist

      const one = await admin.get('/keys/globex-app');
      const list = await admin.get('/keys?tenant=globex');
      expect(list.json.data.map((k: { id: string }) => k.id)).toEqual(['globex-app']);
      expect(one.json).toMatchObject({ id: 'globex-app', prefix: issued.json.prefix });
      const shown = admin.transcript.slice(before).filter((text) => text.includes(key));
      expect(shown).toHaveLength(1);
      const stored = await gw.gateway.platform.database.query<{ n: string }>(`SELECT count(*)::text AS n FROM events WHERE data::text LIKE $1 OR metadata::text LIKE $1`, [`%${key.slice(6)}%`]);
      expect(stored[0].n).toBe('0');
    });

    test('a generated id when none is given; unknown tenants, bad scopes and past expiries are refused', async () => {
      const generated = await admin.post('/keys', { tenant: 'globex' });
      expect(generated.json.id).toMatch(/^key-[0-9A-Za-z]{12}$/);
      const unknown = await admin.post('/keys', { tenant: 'nobody' });
      expect(unknown.status).toBe(422);
      expect(unknown.json.error.code).toBe('tenant_not_found');
      expectFields(await admin.post('/keys', { tenant: 'globex', scopes: ['root'], expiresAt: 'tomorrow', key: 'sk-sy-chosen' }), ['scopes[0]', 'expiresAt', 'key']);
      const past = await admin.post('/keys', { tenant: 'globex', expiresAt: '2020-01-01T00:00:00Z' });
      expect(past.status).toBe(422);
      expect(past.json.error.code).toBe('invalid_key');
      expect((await admin.post('/keys', { id: 'globex-app', tenant: 'globex' })).json.error.code).toBe('key_exists');
    });

    test('revocation takes effect on the next request; revoking twice is refused', async () => {
      const issued = await admin.post('/keys', { id: 'short-lived', tenant: 'acme' });
      expect((await chat(issued.json.key)).status).toBe(200);
      const revoked = await admin.post('/keys/short-lived/revoke', { reason: 'rotated' });
      expect(revoked.json).toMatchObject({ status: 'revoked', appended: ['ApiKeyRevoked'] });
      const refused = await chat(issued.json.key);
      expect(refused.status).toBe(401);
      expect(refused.json.error.code).toBe('invalid_api_key');
      const twice = await admin.post('/keys/short-lived/revoke');
      expect(twice.status).toBe(409);
      expect(twice.json.error.code).toBe('key_already_revoked');
      expect((await admin.post('/keys/ghost/revoke')).status).toBe(404);
    });

    test('expiry: refused from the instant it expires; the sweeper records ApiKeyExpired once', async () => {
      const expiresAt = new Date(Date.now() + 1200);
      const issued = await admin.post('/keys', { id: 'expiring', tenant: 'acme', expiresAt: expiresAt.toISOString() });
      expect((await chat(issued.json.key)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt.getTime() - Date.now()) + 20));
      expect((await chat(issued.json.key)).status).toBe(401);
      expect((await admin.get('/keys/expiring')).json.status).toBe('expired');
      await waitUntil(async () => (await streamEvents('apikey-expiring')).some((e) => e.type === 'ApiKeyExpired'), 5000, 'ApiKeyExpired');
      // A second sweep (another node, or this one again) finds nothing to do.
      expect(await gw.gateway.app.get(KeyExpirySweeper).sweep()).toBe(0);
      const events = await streamEvents('apikey-expiring');
      expect(events.map((e) => e.type)).toEqual(['ApiKeyIssued', 'ApiKeyExpired']);
      expect(events[1].metadata.actor).toBe('system:key-expiry');
    });
  });

  describe('GET /v1/models', () => {
    test('lists only public aliases the key may use, in OpenAI list format, never deployments or providers', async () => {
      await admin.put('/aliases/hidden', { routes: [{ deployment: 'backup' }], visibility: 'private' });
      const models = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.key}` } });
      const body = (await models.json()) as { object: string; data: Array<{ id: string }> };
      expect(body.object).toBe('list');
      expect(body.data.map((m: { id: string }) => m.id).sort()).toEqual(['chat', 'solo']);
      for (const model of body.data) expect(model).toEqual({ id: model.id, object: 'model', created: expect.any(Number), owned_by: expect.any(String) });
      const text = JSON.stringify(body);
      for (const hidden of ['primary', 'backup', 'mock-upstream', gw.mockUrl, 'hidden']) expect(text).not.toContain(hidden);

      const limited = await admin.post('/keys', { id: 'solo-only', tenant: 'acme', aliases: ['solo'] });
      const own = (await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${limited.json.key}` } })).json()) as { data: Array<{ id: string }> };
      expect(own.data.map((m: { id: string }) => m.id)).toEqual(['solo']);
      const forbidden = await fetch(`${gw.url}/v1/models/chat`, { headers: { authorization: `Bearer ${limited.json.key}` } });
      expect(forbidden.status).toBe(404);
      expect((await fetch(`${gw.url}/v1/models/hidden`, { headers: { authorization: `Bearer ${gw.key}` } })).status).toBe(404);
      expect((await fetch(`${gw.url}/v1/models/primary`, { headers: { authorization: `Bearer ${gw.key}` } })).status).toBe(404);
      expect(await (await fetch(`${gw.url}/v1/models/solo`, { headers: { authorization: `Bearer ${gw.key}` } })).json()).toMatchObject({ id: 'solo', object: 'model' });
      expect((await fetch(`${gw.url}/v1/models`)).status).toBe(401);
    });
  });

  test('no admin response ever contained a provider credential or the admin token', () => {
    const all = admin.transcript.join('\n');
    expect(all).not.toContain(process.env.SY_TEST_UPSTREAM_KEY!);
    expect(all).not.toContain('second-provider-secret-value');
    expect(all).not.toContain(ADMIN_TOKEN);
  });
});
