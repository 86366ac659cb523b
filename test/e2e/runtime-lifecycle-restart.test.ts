import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { openDatabase } from '../../src/kernel/database/open-database.js';
import { AdminClient } from '../support/admin-client.js';
import { runCli, startServer } from '../support/cli-process.js';
import { createScratchDatabase } from '../support/services.js';
import { seedMigratedDataDir } from '../support/migrated-template.js';

/**
 * Runtime state wins over the YAML for lifecycle (issue 8, Build 9): an operator revokes a key, suspends a
 * tenant and disables a deployment that the configuration file also declares; the next start with the
 * same file must come up, keep all three as they are, and say so in its log; `apply` (dry run and real)
 * reports the same drift and appends nothing for it. Real `serve` processes on one store (a scratch
 * PostgreSQL database when DATABASE_URL is set, else embedded PGlite).
 */
const postgresUrl = process.env.DATABASE_URL || null;
const TIMEOUT = postgresUrl ? 90_000 : 240_000;
const ADMIN_TOKEN = 'lifecycle-admin-token-0123456789';

describe('a restart after runtime lifecycle changes', () => {
  let dir: string;
  let mock: MockProviderServer;
  let mockUrl = '';
  let scratch: { url: string; drop: () => Promise<void> } | null = null;
  const keys = { acme: generateApiKey(), ops: generateApiKey(), globex: generateApiKey() };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-lifecycle-'));
    mock = new MockProviderServer();
    mockUrl = await mock.listen(0);
    scratch = postgresUrl ? await createScratchDatabase(postgresUrl) : null;
    if (!scratch) await seedMigratedDataDir(join(dir, 'data')); // an embedded store without paying initdb and the migrations (migrated-template.ts)
  });
  afterAll(async () => {
    await mock.close();
    await scratch?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('starts with the same file, keeps the key revoked, the tenant suspended and the deployment disabled, and reports the drift', async () => {
    const configPath = join(dir, 'switchyard.yaml');
    writeFileSync(configPath, `
providers:
  - { id: upstream, type: openai-compatible, baseUrl: "${mockUrl}/v1", apiKey: "env:LIFECYCLE_UPSTREAM_KEY", allowPrivateNetwork: true }
deployments:
  - { id: primary, provider: upstream, model: model-primary, price: { inputPer1M: "1", outputPer1M: "2" } }
  - { id: backup, provider: upstream, model: model-backup, price: { inputPer1M: "1", outputPer1M: "2" } }
aliases:
  - { name: chat, routes: [{ deployment: primary, priority: 0 }, { deployment: backup, priority: 1 }] }
tenants:
  - { id: acme }
  - { id: globex }
apiKeys:
  - { id: k3, tenant: acme, key: "env:LIFECYCLE_ACME_KEY" }
  - { id: ops, tenant: acme, key: "env:LIFECYCLE_OPS_KEY" }
  - { id: globex-app, tenant: globex, key: "env:LIFECYCLE_GLOBEX_KEY" }
`);
    const env = {
      ...process.env, SWITCHYARD_CONFIG: configPath, SWITCHYARD_DATA_DIR: join(dir, 'data'), DATABASE_URL: scratch?.url ?? '', ADMIN_TOKEN, LOG_LEVEL: 'log',
      LIFECYCLE_UPSTREAM_KEY: 'lifecycle-upstream-secret', LIFECYCLE_ACME_KEY: keys.acme, LIFECYCLE_OPS_KEY: keys.ops, LIFECYCLE_GLOBEX_KEY: keys.globex,
    };
    const chat = async (url: string, key: string) => {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const body = (await response.json()) as { error?: { code?: string }; model?: string };
      return { status: response.status, code: body.error?.code ?? null };
    };

    const first = await startServer(env);
    try {
      for (const key of Object.values(keys)) expect((await chat(first.url, key)).status).toBe(200);
      const admin = new AdminClient(first.url, ADMIN_TOKEN);
      expect((await admin.post('/keys/k3/revoke', { reason: 'leaked' })).status).toBe(200);
      expect((await admin.post('/tenants/globex/suspend', { reason: 'unpaid' })).status).toBe(200);
      expect((await admin.post('/deployments/primary/disable', { reason: 'incident' })).status).toBe(200);
    } finally {
      await first.stop();
    }
    const before = await eventCount();

    const second = await startServer(env);
    try {
      const log = second.output();
      expect(log).toContain('apiKeys[0]: key k3 is revoked and stays so');
      expect(log).toContain('tenants[1]: tenant globex was suspended at runtime and stays suspended');
      expect(log).toContain('deployments[0]: deployment primary was disabled at runtime and stays disabled');
      expect(await chat(second.url, keys.acme)).toEqual({ status: 401, code: 'invalid_api_key' });
      expect(await chat(second.url, keys.globex)).toEqual({ status: 403, code: 'tenant_suspended' });
      mock.clearRequests();
      expect((await chat(second.url, keys.ops)).status).toBe(200);
      expect(mock.requests().map((r) => r.model)).toEqual(['model-backup']);
      const admin = new AdminClient(second.url, ADMIN_TOKEN);
      expect((await admin.get('/deployments/primary')).json.status).toBe('disabled');
      expect((await admin.get('/tenants/globex')).json.status).toBe('suspended');
    } finally {
      await second.stop();
    }
    expect(await eventCount()).toBe(before);

    for (const flags of [['--dry-run'], []]) {
      const applied = await runCli(['apply', '-f', configPath, ...flags], env);
      expect({ flags, code: applied.code, stderr: applied.stderr }).toEqual({ flags, code: 0, stderr: '' });
      expect(applied.stdout).toContain('Drift: 3 runtime change(s) the file does not match, kept as they are:');
      expect(applied.stdout).toContain('key k3 is revoked and stays so');
      expect(applied.stdout).toContain('tenant globex was suspended at runtime');
      expect(applied.stdout).toContain('deployment primary was disabled at runtime');
      expect(applied.stdout).toContain('Nothing to change apart from the drift above.');
    }
    expect(await eventCount()).toBe(before);
  }, TIMEOUT);

  async function eventCount(): Promise<number> {
    const database = await openDatabase({ databaseUrl: scratch?.url ?? null, dataDir: scratch ? null : join(dir, 'data') });
    try {
      const rows = await database.query<{ n: string }>(`SELECT count(*)::text AS n FROM events WHERE stream_id NOT LIKE 'request-%' AND stream_id NOT LIKE 'breaker-%'`);
      return Number(rows[0].n);
    } finally {
      await database.close();
    }
  }
});
