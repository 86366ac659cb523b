import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { openDatabase } from '../../src/kernel/database/open-database.js';
import { AdminClient } from '../support/admin-client.js';
import { startServer } from '../support/cli-process.js';
import { defaultYaml } from '../support/gateway-harness.js';
import { createScratchDatabase } from '../support/services.js';
import { seedMigratedDataDir } from '../support/migrated-template.js';

/**
 * Secrets never appear in events, logs, API responses or error messages (DESIGN §10). A real `serve`
 * process runs flows that handle every kind of secret — provider credentials, gateway keys, the admin
 * token, credentials pasted where they do not belong — with debug logging on; then the event log, the
 * process's whole stdout/stderr and every HTTP answer are searched for each secret. The store is a
 * scratch PostgreSQL database when DATABASE_URL is set, else embedded PGlite.
 */
const postgresUrl = process.env.DATABASE_URL || null;
const TIMEOUT = postgresUrl ? 90_000 : 300_000;

interface Store {
  env: NodeJS.ProcessEnv;
  rows(sql: string): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

async function openStore(dir: string): Promise<Store> {
  const scratch = postgresUrl ? await createScratchDatabase(postgresUrl) : null;
  const dataDir = join(dir, 'data');
  if (!scratch) await seedMigratedDataDir(dataDir); // an embedded store without paying initdb and the migrations (migrated-template.ts)
  return {
    env: { DATABASE_URL: scratch?.url ?? '', SWITCHYARD_DATA_DIR: dataDir },
    // On PGlite only one process may open the directory: call this while no server runs.
    rows: async (sql) => {
      const database = await openDatabase({ databaseUrl: scratch?.url ?? null, dataDir });
      try {
        return await database.query(sql);
      } finally {
        await database.close();
      }
    },
    close: async () => {
      await scratch?.drop();
    },
  };
}

describe('secret hygiene of a running gateway', () => {
  let dir: string;
  let store: Store;
  let mock: MockProviderServer;
  let mockUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-secrets-'));
    store = await openStore(dir);
    mock = new MockProviderServer();
    mockUrl = await mock.listen(0);
  });
  afterAll(async () => {
    await mock.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('no secret reaches the event log, the logs, an API response or an error message', async () => {
    const secrets = {
      adminToken: 'hygiene-admin-token-Qw3rTy9876543210',
      upstreamKey: 'hygiene-upstream-credential-AbC123xyz',
      secondUpstreamKey: 'hygiene-second-credential-ZyX987cba',
      gatewayKey: generateApiKey(),
      urlPassword: 'hygiene-url-password-5150',
      pastedLiteral: 'sk-proj-hygiene-pasted-literal-2468',
      wrongAdminToken: 'hygiene-wrong-admin-token-1357',
      unknownKey: generateApiKey(),
    };
    const configPath = join(dir, 'switchyard.yaml');
    writeFileSync(configPath, defaultYaml(mockUrl, 'HYGIENE_GATEWAY_KEY'));
    const server = await startServer({
      ...process.env, ...store.env, SWITCHYARD_CONFIG: configPath, LOG_LEVEL: 'debug', ADMIN_TOKEN: secrets.adminToken,
      HYGIENE_GATEWAY_KEY: secrets.gatewayKey, SY_TEST_UPSTREAM_KEY: secrets.upstreamKey, HYGIENE_SECOND_KEY: secrets.secondUpstreamKey,
    });
    const answers: string[] = [];
    const admin = new AdminClient(server.url, secrets.adminToken);
    let issuedKey = '';
    let issuance = '';
    try {
      const chat = async (key: string, body: Record<string, unknown>) => {
        const response = await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
        });
        answers.push(await response.text());
        return response.status;
      };

      // A second provider, registered through the admin API with a credential reference, serving an alias.
      expect((await admin.post('/providers', { id: 'second', type: 'openai-compatible', baseUrl: `${mockUrl}/v1`, allowPrivateNetwork: true, apiKey: 'env:HYGIENE_SECOND_KEY' })).status).toBe(201);
      expect((await admin.post('/deployments', { id: 'second-model', provider: 'second', model: 'model-second', capabilities: ['chat', 'streaming'], contextWindow: 8000, maxOutputTokens: 1000 })).status).toBe(201);
      expect((await admin.post('/deployments/second-model/prices', { inputPer1M: '1', outputPer1M: '2' })).status).toBe(201);
      expect((await admin.put('/aliases/second', { routes: [{ deployment: 'second-model' }] })).status).toBe(201);

      // Traffic with both providers' credentials, buffered and streamed, with a fallback on the way.
      expect(await chat(secrets.gatewayKey, { model: 'chat' })).toBe(200);
      expect(await chat(secrets.gatewayKey, { model: 'chat', stream: true })).toBe(200);
      mock.addScenario({ model: 'model-primary', times: 1, behaviour: { status: 500 } });
      expect(await chat(secrets.gatewayKey, { model: 'chat' })).toBe(200);
      mock.addScenario({ model: 'model-primary', times: 2, behaviour: { status: 401 } });
      expect(await chat(secrets.gatewayKey, { model: 'solo' })).toBeGreaterThanOrEqual(400);
      const upstream = mock.requests();
      expect(upstream.length).toBeGreaterThanOrEqual(5);

      // A key issued through the API: shown in that one answer, used, revoked, refused.
      const issued = await admin.post('/keys', { id: 'hygiene-app', tenant: 'acme', aliases: ['second'] });
      issuedKey = issued.json.key;
      issuance = issued.text;
      expect(issuedKey).toMatch(/^sk-sy-/);
      expect(await chat(issuedKey, { model: 'second' })).toBe(200);
      expect((await admin.post('/keys/hygiene-app/revoke')).status).toBe(200);
      expect(await chat(issuedKey, { model: 'second' })).toBe(401);
      expect(await chat(secrets.unknownKey, { model: 'chat' })).toBe(401);

      // Secrets pasted where they do not belong are refused without being echoed.
      const inUrl = await admin.post('/providers', { id: 'leaky', type: 'openai-compatible', baseUrl: `https://admin:${secrets.urlPassword}@llm.example.com/v1` });
      expect(inUrl.status).toBe(422);
      const literal = await admin.post('/providers', { id: 'pasted', type: 'openai', apiKey: secrets.pastedLiteral });
      expect(literal.status).toBe(400);
      const update = await admin.put('/providers/second', { type: 'openai-compatible', baseUrl: `http://u:${secrets.urlPassword}@127.0.0.1:1/v1` });
      expect(update.status).toBe(422);
      expect((await admin.withToken(secrets.wrongAdminToken).get('/status')).status).toBe(401);
      expect((await admin.withToken(secrets.gatewayKey).get('/status')).status).toBe(403);
      expect((await admin.get('/providers')).status).toBe(200);
      expect((await admin.get('/aliases/second')).status).toBe(200);
      expect((await admin.get('/keys')).status).toBe(200);
      expect((await admin.get('/status')).status).toBe(200);
    } finally {
      await server.stop();
    }

    const eventRows = await store.rows(`SELECT stream_id, event_type, data::text AS data, metadata::text AS metadata FROM events`);
    expect(eventRows.length).toBeGreaterThan(20);
    const haystacks: Record<string, string> = {
      events: JSON.stringify(eventRows),
      logs: server.output(),
      'admin responses (except the issuance)': admin.transcript.filter((text) => text !== issuance).join('\n'),
      'inference responses': answers.join('\n'),
    };
    // The haystacks are the right ones: references are there, the values behind them are not.
    expect(haystacks.events).toContain('env:HYGIENE_SECOND_KEY');
    expect(haystacks.events).toContain('env:SY_TEST_UPSTREAM_KEY');
    expect(haystacks.events).toContain('ApiKeyRevoked');
    expect(haystacks.logs).toContain('Switchyard is serving');
    expect(haystacks['admin responses (except the issuance)']).toContain('hygiene-app');
    for (const [name, secret] of [...Object.entries(secrets), ['issuedKey', issuedKey]]) {
      for (const [where, text] of Object.entries(haystacks)) {
        expect({ secret: name, where, found: text.includes(secret) }).toEqual({ secret: name, where, found: false });
      }
    }
    // The one answer that shows the issued key shows nothing else secret.
    expect(issuance.split(issuedKey)).toHaveLength(2);
    for (const secret of Object.values(secrets)) expect(issuance).not.toContain(secret);
  }, TIMEOUT);

  test('a generated admin token is printed once on first start, stored only as a hash, and keeps working after a restart', async () => {
    const fresh = await openStore(mkdtempSync(join(dir, 'generated-')));
    try {
      const env = { ...process.env, ...fresh.env, ADMIN_TOKEN: '', SWITCHYARD_CONFIG: '', LOG_LEVEL: 'log' };
      const first = await startServer(env);
      let token: string;
      try {
        const match = /Admin token \(shown once, stored hashed\): (sy-admin-[0-9A-Za-z]{40})/.exec(first.output());
        expect(match).not.toBeNull();
        token = match![1];
        expect(first.output().split(token)).toHaveLength(2);
        expect((await new AdminClient(first.url, token).get('/status')).status).toBe(200);
        expect((await new AdminClient(first.url, `${token}x`).get('/status')).status).toBe(401);
      } finally {
        await first.stop();
      }
      const stored = await fresh.rows(`SELECT token_id, hash FROM admin_tokens`);
      expect(stored).toEqual([{ token_id: 'bootstrap', hash: createHash('sha256').update(token).digest('hex') }]);
      expect(JSON.stringify(await fresh.rows(`SELECT data::text, metadata::text FROM events`))).not.toContain(token);

      const second = await startServer(env);
      try {
        expect(second.output()).not.toContain(token);
        expect(second.output()).not.toContain('Admin token');
        const status = await new AdminClient(second.url, token).get('/status');
        expect(status.status).toBe(200);
        expect(status.text).not.toContain(token);
      } finally {
        await second.stop();
      }
      expect(second.output()).not.toContain(token);
    } finally {
      await fresh.close();
    }
  }, TIMEOUT);
});
