import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { connect as connectNats } from '@nats-io/transport-node';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { NATS_STREAM } from '../../modules/relay/index.js';
import { AdminClient } from '../support/admin-client.js';
import { startServer } from '../support/cli-process.js';
import { defaultYaml } from '../support/gateway-harness.js';
import { seedMigratedDataDir } from '../support/migrated-template.js';
import { OwnNats } from '../support/own-nats.js';

/**
 * A real `serve` on the embedded store with SWITCHYARD_RELAY_URL (the relay runs in the serving process):
 * control-plane changes and traffic that handle every kind of secret — a prompt, a completion, gateway keys,
 * an upstream credential, the admin token — then every message on the broker is compared with
 * `GET /admin/v1/events` (the same envelope, every event) and searched for each secret, body and headers.
 */
describe('the relay in a serving process', () => {
  let dir: string;
  let nats: OwnNats;
  let mock: MockProviderServer;
  let mockUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-relay-e2e-'));
    nats = await OwnNats.start();
    mock = new MockProviderServer();
    mockUrl = await mock.listen(0);
  });
  afterAll(async () => {
    await mock.close();
    await nats.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('publishes every event as the history API shows it, with no prompt, completion, key or credential in any message; metrics name the relay', async () => {
    const secrets = {
      adminToken: 'relay-admin-token-Qw3rTy9876543210',
      upstreamKey: 'relay-upstream-credential-AbC123xyz',
      secondUpstreamKey: 'relay-second-credential-ZyX987cba',
      gatewayKey: generateApiKey(),
      prompt: `relay-prompt-canary-${Date.now().toString(36)} the quarterly numbers are confidential`,
    };
    const dataDir = join(dir, 'data');
    await seedMigratedDataDir(dataDir);
    const configPath = join(dir, 'switchyard.yaml');
    writeFileSync(configPath, defaultYaml(mockUrl, 'RELAY_GATEWAY_KEY'));
    const server = await startServer({
      ...process.env, DATABASE_URL: '', SWITCHYARD_DATA_DIR: dataDir, SWITCHYARD_CONFIG: configPath, ADMIN_TOKEN: secrets.adminToken,
      RELAY_GATEWAY_KEY: secrets.gatewayKey, SY_TEST_UPSTREAM_KEY: secrets.upstreamKey, RELAY_SECOND_KEY: secrets.secondUpstreamKey,
      SWITCHYARD_RELAY_URL: nats.url,
      // The exact cache on, in this process only (a shared Redis would answer from another run's entries).
      SWITCHYARD_CACHE: 'on', REDIS_URL: '',
    });
    const admin = new AdminClient(server.url, secrets.adminToken);
    const completions: string[] = [];
    let issuedKey = '';
    let rotatedKey = '';
    try {
      const chat = async (key: string, body: Record<string, unknown>) => {
        const response = await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ messages: [{ role: 'user', content: secrets.prompt }], ...body }),
        });
        const text = await response.text();
        if (response.ok && !body.stream) completions.push((JSON.parse(text) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content);
        return response.status;
      };
      // Control plane: a provider with a credential reference, a deployment's life, prices, aliases, a tenant's, keys'.
      expect((await admin.post('/providers', { id: 'second', type: 'openai-compatible', baseUrl: `${mockUrl}/v1`, allowPrivateNetwork: true, apiKey: 'env:RELAY_SECOND_KEY' })).status).toBe(201);
      const current = await admin.get('/providers/second');
      const updated = await admin.put('/providers/second', { type: 'openai-compatible', baseUrl: current.json.baseUrl, allowPrivateNetwork: true, apiKey: 'env:RELAY_SECOND_KEY', region: 'eu' }, { 'if-match': current.headers.get('etag')! });
      expect({ status: updated.status, body: updated.text }).toMatchObject({ status: 200 });
      expect((await admin.post('/deployments', { id: 'second-model', provider: 'second', model: 'model-second', capabilities: ['chat', 'streaming'], contextWindow: 8000, maxOutputTokens: 1000 })).status).toBe(201);
      expect((await admin.post('/deployments/second-model/prices', { inputPer1M: '1', outputPer1M: '2' })).status).toBe(201);
      expect((await admin.put('/aliases/second', { routes: [{ deployment: 'second-model' }] })).status).toBe(201);
      expect((await admin.post('/tenants', { id: 'globex', name: 'Globex' })).status).toBe(201);
      expect((await admin.put('/tenants/globex/limits', { rpm: 600, tpm: 100000 })).status).toBe(200);
      expect((await admin.put('/tenants/globex/budget', { monthlyUsd: '100', softPct: 75 })).status).toBe(200);
      expect((await admin.post('/tenants/globex/suspend', { reason: 'review' })).status).toBe(200);
      expect((await admin.post('/tenants/globex/reinstate')).status).toBe(200);
      const issued = await admin.post('/keys', { id: 'relay-app', tenant: 'acme', aliases: ['second', 'chat'] });
      issuedKey = issued.json.key;
      expect((await admin.patch('/keys/relay-app', { aliases: ['second', 'chat', 'solo'] })).status).toBe(200);
      const rotated = await admin.post('/keys/relay-app/rotate', { overlapSeconds: 60 });
      expect(rotated.status).toBe(200);
      rotatedKey = rotated.json.key;
      const deployment = await admin.get('/deployments/second-model');
      const changed = await admin.put('/deployments/second-model', { provider: 'second', model: 'model-second', capabilities: ['chat', 'streaming'], contextWindow: 8000, maxOutputTokens: 2000 }, { 'if-match': deployment.headers.get('etag')! });
      expect({ status: changed.status, body: changed.text }).toMatchObject({ status: 200 });
      // Traffic: buffered, streamed, a fallback, a cache hit, a refusal.
      expect(await chat(secrets.gatewayKey, { model: 'chat' })).toBe(200);
      expect(await chat(secrets.gatewayKey, { model: 'chat' })).toBe(200);
      expect(await chat(secrets.gatewayKey, { model: 'chat', stream: true })).toBe(200);
      mock.addScenario({ model: 'model-primary', times: 1, behaviour: { status: 500 } });
      expect(await chat(secrets.gatewayKey, { model: 'chat', temperature: 0.5 })).toBe(200);
      // A refusal the log records: no route while the alias's one deployment is disabled.
      expect((await admin.post('/deployments/second-model/disable', { reason: 'maintenance' })).status).toBe(200);
      expect(await chat(issuedKey, { model: 'second' })).toBe(503);
      expect((await admin.post('/deployments/second-model/enable')).status).toBe(200);
      expect(await chat(issuedKey, { model: 'second' })).toBe(200);
      expect(await chat(issuedKey, { model: 'ghost' })).toBe(404);
      expect((await admin.post('/keys/relay-app/revoke', { reason: 'test over' })).status).toBe(200);
      expect((await admin.post('/aliases/second/retire')).status).toBe(200);
      expect((await admin.post('/deployments/second-model/retire')).status).toBe(200);
      expect((await admin.delete('/providers/second')).status).toBe(200);
      expect(completions.length).toBeGreaterThan(0);

      // Every event of the log, as the history API shows it.
      const history: Array<Record<string, unknown> & { eventId: string; type: string }> = [];
      for (let after: string | undefined; ;) {
        const page = await admin.get(`/events?limit=500${after ? `&after=${encodeURIComponent(after)}` : ''}`);
        expect(page.status).toBe(200);
        history.push(...page.json.data);
        if (page.json.data.length === 0) break;
        after = page.json.next;
      }
      // The relay catches up by itself (metrics say so), then the broker holds exactly those envelopes.
      const metric = async (name: string) => {
        const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${secrets.adminToken}` } })).text();
        const line = text.split('\n').find((l) => l.startsWith(`${name} `));
        return line ? Number(line.split(' ')[1]) : null;
      };
      for (const started = Date.now(); (await metric('switchyard_relay_published_total'))! < history.length || (await metric('switchyard_relay_lag_events')) !== 0;) {
        if (Date.now() - started > 30_000) throw new Error('the relay did not catch up within 30 s');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await metric('switchyard_relay_errors_total{kind="refused"}')).toBe(0);

      const connection = await connectNats({ servers: nats.url });
      const consumer = await jetstream(connection).consumers.get(NATS_STREAM);
      const messages = await consumer.fetch({ max_messages: history.length, expires: 5_000 });
      const received: Array<{ body: string; headers: string }> = [];
      for await (const message of messages) received.push({ body: message.string(), headers: (message.headers?.keys() ?? []).map((key) => `${key}: ${message.headers!.get(key)}`).join('\n') });
      await connection.close();

      const byId = new Map(received.map((message) => [(JSON.parse(message.body) as { eventId: string }).eventId, JSON.parse(message.body)]));
      expect(received.length).toBe(history.length);
      for (const event of history) expect(byId.get(event.eventId)).toEqual(event);
      const types = new Set(history.map((event) => event.type));
      for (const type of [
        'ProviderRegistered', 'DeploymentUpdated', 'ApiKeyUpdated', 'ApiKeySecretRotated', 'ProviderUpdated', 'ProviderRemoved', 'DeploymentRegistered', 'DeploymentDisabled', 'DeploymentEnabled',
        'DeploymentRetired', 'PriceScheduled', 'AliasPublished', 'AliasRetired', 'TenantCreated', 'TenantLimitsSet', 'TenantBudgetSet', 'TenantSuspended',
        'TenantReinstated', 'ApiKeyIssued', 'ApiKeyRevoked', 'RequestAdmitted', 'RequestRejected', 'AttemptFinished', 'RequestServedFromCache', 'RequestCompleted',
      ]) expect({ type, relayed: types.has(type) }).toEqual({ type, relayed: true });

      const haystack = received.map((message) => `${message.body}\n${message.headers}`).join('\n');
      expect(haystack).toContain('env:RELAY_SECOND_KEY'); // the reference is there, the value behind it is not
      const needles: Record<string, string> = { ...secrets, issuedKey, rotatedKey, promptCanary: secrets.prompt.split(' ')[0], ...Object.fromEntries(completions.map((text, i) => [`completion${i}`, text])) };
      for (const [name, secret] of Object.entries(needles)) expect({ secret: name, found: haystack.includes(secret) }).toEqual({ secret: name, found: false });
    } finally {
      await server.stop();
    }
  }, 120_000);
  test('broker down: the gateway serves, readiness names the relay as failing without going unready, and the lag and errors show in /metrics; it catches up when the broker returns', async () => {
    await nats.stop();
    const dataDir = join(dir, 'data-down');
    await seedMigratedDataDir(dataDir);
    const configPath = join(dir, 'switchyard-down.yaml');
    writeFileSync(configPath, defaultYaml(mockUrl, 'RELAY_GATEWAY_KEY'));
    const gatewayKey = generateApiKey();
    const adminToken = 'relay-admin-token-down-0123456789';
    const server = await startServer({
      ...process.env, DATABASE_URL: '', REDIS_URL: '', SWITCHYARD_DATA_DIR: dataDir, SWITCHYARD_CONFIG: configPath, ADMIN_TOKEN: adminToken,
      RELAY_GATEWAY_KEY: gatewayKey, SY_TEST_UPSTREAM_KEY: 'relay-upstream-down', SWITCHYARD_RELAY_URL: nats.url,
    });
    const metric = async (name: string) => {
      const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } })).text();
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return line ? Number(line.split(' ')[1]) : null;
    };
    try {
      const chat = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${gatewayKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(chat.status).toBe(200);
      const waitFor = async (probe: () => Promise<boolean>, what: string) => {
        for (const started = Date.now(); !(await probe()); ) {
          if (Date.now() - started > 30_000) throw new Error(`${what} did not happen within 30 s`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      };
      await waitFor(async () => ((await metric('switchyard_relay_errors_total{kind="unavailable"}')) ?? 0) > 0, 'a failed publish');
      expect(await metric('switchyard_relay_lag_events')).toBeGreaterThan(0);
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(200);
      const body = (await ready.json()) as { status: string; problems: string[] };
      expect(body.status).toBe('ready');
      expect(body.problems).toContain('projection relay: failing, retrying');

      await nats.restart();
      await waitFor(async () => (await metric('switchyard_relay_lag_events')) === 0, 'the relay catching up');
      expect(await metric('switchyard_relay_published_total')).toBeGreaterThan(0);
      await waitFor(async () => !((await (await fetch(`${server.url}/readyz`)).json()) as { problems: string[] }).problems.includes('projection relay: failing, retrying'), 'readiness clearing');
    } finally {
      await server.stop();
      await nats.restart().catch(() => undefined);
    }
  }, 120_000);
});
