import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { openDatabase } from '../../src/kernel/database/open-database.js';
import { AdminClient } from '../support/admin-client.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import { runCli as runCliProcess, startServer } from '../support/cli-process.js';
import { createScratchDatabase } from '../support/services.js';
import { seedMigratedDataDir } from '../support/migrated-template.js';

/**
 * Issue 34 item 1, as an operator meets it: the file owns what it declares, and a runtime edit of it
 * through the admin API (an alias's maxAttempts, a price, a tenant's limits) survives a restart, which
 * reports each edited field as drift instead of reverting it. `apply --dry-run` shows the same with a
 * field-level plan; a file edit of another field applies and keeps the API's; `config export` gives a
 * file that applies with no change; `--overwrite-runtime-edits` reverts the edits; a file that says what
 * a runtime edit set adopts it (recorded once, never on a dry run), after which a file edit of that field
 * applies, until the next runtime edit. Real `serve` processes on one store: a scratch PostgreSQL database
 * when DATABASE_URL is set, else embedded PGlite. The first `apply --dry-run` is a `switchyard` process of
 * its own; the other CLI calls run in this process (cli-in-process.ts: the same code, without seconds of
 * start-up each), since what they plan, apply and export is the subject here.
 */
const runCli = runCliInProcess;
const postgresUrl = process.env.DATABASE_URL || null;
const TIMEOUT = postgresUrl ? 90_000 : 240_000;
const ADMIN_TOKEN = 'ownership-admin-token-0123456789';

describe('who owns a definition: the file, and runtime edits of it', () => {
  let dir: string;
  let mock: MockProviderServer;
  let scratch: { url: string; drop: () => Promise<void> } | null = null;
  let env: NodeJS.ProcessEnv;
  let configPath: string;
  let yaml: (policy?: string) => string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-ownership-'));
    mock = new MockProviderServer();
    const mockUrl = await mock.listen(0);
    scratch = postgresUrl ? await createScratchDatabase(postgresUrl) : null;
    if (!scratch) await seedMigratedDataDir(join(dir, 'data'));
    configPath = join(dir, 'switchyard.yaml');
    yaml = (policy = '') => `
providers:
  - { id: upstream, type: openai-compatible, baseUrl: "${mockUrl}/v1", apiKey: "env:OWNERSHIP_UPSTREAM_KEY", allowPrivateNetwork: true }
deployments:
  - { id: primary, provider: upstream, model: model-primary, price: { inputPer1M: "1", outputPer1M: "2" } }
aliases:
  - { name: chat, routes: [{ deployment: primary, priority: 0 }]${policy} }
tenants:
  - { id: acme, limits: { rpm: 600 } }
apiKeys:
  - { id: acme-app, tenant: acme, key: "env:OWNERSHIP_ACME_KEY" }
`;
    writeFileSync(configPath, yaml());
    env = {
      ...process.env, SWITCHYARD_CONFIG: configPath, SWITCHYARD_DATA_DIR: join(dir, 'data'), DATABASE_URL: scratch?.url ?? '', ADMIN_TOKEN, LOG_LEVEL: 'log',
      OWNERSHIP_UPSTREAM_KEY: 'ownership-upstream-secret', OWNERSHIP_ACME_KEY: generateApiKey(),
    };
  }, TIMEOUT);
  afterAll(async () => {
    await mock.close();
    await scratch?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function query<T>(sql: string): Promise<T[]> {
    const database = await openDatabase({ databaseUrl: scratch?.url ?? null, dataDir: scratch ? null : join(dir, 'data') });
    try {
      return await database.query<T>(sql);
    } finally {
      await database.close();
    }
  }
  const controlEvents = async () => Number((await query<{ n: string }>(
    `SELECT count(*)::text AS n FROM events WHERE stream_id NOT LIKE 'request-%' AND stream_id NOT LIKE 'breaker-%'`))[0].n);
  /** The running values the test edits, from the log: the alias's policy, the latest price, the tenant's limits. */
  async function running() {
    const last = async (stream: string, type: string) => JSON.parse((await query<{ data: string }>(
      `SELECT data::text AS data FROM events WHERE stream_id = '${stream}' AND event_type = '${type}' ORDER BY stream_version DESC LIMIT 1`))[0].data);
    const prices = (await query<{ data: string }>(`SELECT data::text AS data FROM events WHERE stream_id = 'price-primary' ORDER BY stream_version`)).map((row) => JSON.parse(row.data));
    const latestPrice = prices.sort((a, b) => Date.parse(a.effectiveFrom) - Date.parse(b.effectiveFrom)).at(-1);
    return {
      policy: (await last('alias-chat', 'AliasPublished')).policy, inputPer1M: latestPrice.inputPer1M,
      rpm: (await last('tenant-acme', 'TenantLimitsSet')).limits.rpm,
    };
  }

  test('a restart after API edits keeps them and reports each field as drift, with who and when', async () => {
    const first = await startServer(env);
    try {
      const admin = new AdminClient(first.url, ADMIN_TOKEN);
      expect((await admin.put('/aliases/chat', { routes: [{ deployment: 'primary', priority: 0 }], policy: { maxAttempts: 2 } })).status).toBe(200);
      expect((await admin.post('/deployments/primary/prices', { inputPer1M: '1.5', outputPer1M: '2' })).status).toBe(201);
      expect((await admin.put('/tenants/acme/limits', { rpm: 100 })).status).toBe(200);
      // Over HTTP too, a misspelt or mistyped option is refused before anything is planned: the file's new tenant is not created.
      const withTenant = yaml().replace('tenants:\n', 'tenants:\n  - { id: not-created }\n');
      for (const body of [{ yaml: withTenant, overwriteRuntimeEdit: true }, { yaml: withTenant, overwriteRuntimeEdits: 'yes' }]) {
        const refused = await admin.post('/config/apply', body);
        expect({ status: refused.status, code: (refused.json as { error?: { code?: string } }).error?.code }).toEqual({ status: 400, code: 'validation_failed' });
      }
      expect((await admin.get('/tenants/not-created')).status).toBe(404);
    } finally {
      await first.stop();
    }
    const before = await controlEvents();
    const edited = await running();
    expect(edited).toEqual({ policy: expect.objectContaining({ maxAttempts: 2 }), inputPer1M: '1.5', rpm: 100 });

    const second = await startServer(env);
    let log: string;
    try {
      log = second.output();
    } finally {
      await second.stop();
    }
    const drift = log.split('\n').filter((line) => line.includes('differs from the running state, which is kept'));
    expect(drift).toHaveLength(3);
    expect(drift.join('\n')).toMatch(/aliases\[0\] alias chat: policy\.maxAttempts: file null, running 2 \(set by admin:\S+ at 20\d\d-[^)]+\); kept/);
    expect(drift.join('\n')).toMatch(/deployments\[0\] deployment primary: price\.inputPer1M: file "1", running "1\.5" \(set by admin:\S+ at [^,]+, price version 2 from /);
    expect(drift.join('\n')).toMatch(/tenants\[0\] tenant acme: limits\.rpm: file 600, running 100 \(set by admin:/);
    expect(log).not.toMatch(/applied .*switchyard\.yaml/);
    expect(log).not.toContain('ownership-upstream-secret');
    expect(await controlEvents()).toBe(before);
    expect(await running()).toEqual(edited);
  }, TIMEOUT);

  test('apply --dry-run lists the drift and a field-level plan; a file edit of another field applies it and keeps the API\'s', async () => {
    writeFileSync(configPath, yaml(', policy: { ttftTimeoutMs: 5000 }'));
    const before = await controlEvents();
    const dry = await runCliProcess(['apply', '-f', configPath, '--dry-run'], env);
    expect({ code: dry.code, stderr: dry.stderr }).toEqual({ code: 0, stderr: '' });
    expect(dry.stdout).toContain('Drift: 3 runtime change(s) the file does not match, kept as they are:');
    expect(dry.stdout).toMatch(/^ {2}aliases\[0\] alias chat: policy\.maxAttempts: file null, running 2 /m);
    expect(dry.stdout).toContain('Plan (dry run, nothing appended): 1 change(s)\n  publish alias chat   (aliases[0])\n      policy.ttftTimeoutMs: null → 5000\n');
    expect(await controlEvents()).toBe(before);

    const applied = await runCli(['apply', '-f', configPath], env);
    expect(applied.code).toBe(0);
    expect(applied.stderr).toContain('[1/1] publish alias chat\n      policy.ttftTimeoutMs: null → 5000\n');
    expect(applied.stdout).toContain('Applied 1 change(s): 1 event(s) appended.');
    expect(await running()).toEqual({ policy: expect.objectContaining({ maxAttempts: 2, ttftTimeoutMs: 5000 }), inputPer1M: '1.5', rpm: 100 });
  }, TIMEOUT);

  test('config export writes a file that applies with no change and no drift; an unwritable path is a clear error', async () => {
    const out = join(dir, 'exported.yaml');
    const exported = await runCli(['config', 'export', '--out', out], env);
    expect({ code: exported.code, stderr: exported.stderr }).toEqual({ code: 0, stderr: `Wrote the running configuration to ${out}\n` });
    const text = readFileSync(out, 'utf8');
    expect(text).toContain('maxAttempts: 2');
    expect(text).toContain('apiKey: env:OWNERSHIP_UPSTREAM_KEY');
    expect(text).toMatch(/key: sha256:[0-9a-f]{64}/);
    expect(text).not.toContain(env.OWNERSHIP_ACME_KEY);
    // Reading the running state needs no provider secret.
    const withoutSecrets = await runCli(['config', 'export'], { ...env, OWNERSHIP_UPSTREAM_KEY: '', OWNERSHIP_ACME_KEY: '' });
    expect({ code: withoutSecrets.code, stderr: withoutSecrets.stderr }).toEqual({ code: 0, stderr: '' });
    expect(withoutSecrets.stdout.replace(/^# .*\n/, '')).toBe(text.replace(/^# .*\n/, ''));
    // No step and no drift; what it would adopt (the API's edits) is recorded only by a real apply (the last test).
    const before = await controlEvents();
    const again = await runCli(['apply', '-f', out, '--dry-run'], env);
    expect(again.code).toBe(0);
    expect(again.stdout).not.toMatch(/Drift:|Plan \(dry run/);
    // The CLI names each field it would adopt, and says the dry run appended nothing.
    expect(again.stdout).toMatch(/^would adopt .*: the file says the same as this runtime edit and would own the field again$/m);
    expect(again.stdout).toMatch(/Nothing else to change \(dry run, nothing appended\)\.\n$/);
    expect(await controlEvents()).toBe(before);

    // A path no one can write (tests may run as root, for whom permissions are no obstacle): under a regular file.
    const refused = await runCli(['config', 'export', '--out', join(out, 'x.yaml')], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^switchyard config export: cannot write .*exported\.yaml\/x\.yaml: ENOTDIR/);
    expect(refused.stdout).toBe('');
    const missing = await runCli(['config', 'export', '--out', join(dir, 'no-such-dir', 'x.yaml')], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot write .*no-such-dir\/x\.yaml: ENOENT/);
  }, TIMEOUT);

  test('an unknown flag is refused and changes nothing; --overwrite-runtime-edits reverts the edits and the file owns them again', async () => {
    const before = await controlEvents();
    const unknown = await runCli(['apply', '-f', configPath, '--overwrite-runtime-edit'], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("Unknown option '--overwrite-runtime-edit'");
    expect(await controlEvents()).toBe(before);

    const dry = await runCli(['apply', '-f', configPath, '--overwrite-runtime-edits', '--dry-run'], env);
    expect(dry.stdout).not.toContain('Drift:');
    expect(dry.stdout).toMatch(/policy\.maxAttempts: 2 → null \(overwrites the runtime edit by admin:\S+ at /);
    expect(dry.stdout).toMatch(/price\.inputPer1M: "1\.5" → "1" \(overwrites the runtime edit by admin:/);
    expect(dry.stdout).toMatch(/limits\.rpm: 100 → 600 \(overwrites the runtime edit by admin:/);
    const overwritten = await runCli(['apply', '-f', configPath, '--overwrite-runtime-edits'], env);
    expect(overwritten.code).toBe(0);
    expect(await running()).toEqual({ policy: expect.objectContaining({ maxAttempts: null, ttftTimeoutMs: 5000 }), inputPer1M: '1', rpm: 600 });
    const settled = await runCli(['apply', '-f', configPath, '--dry-run'], env);
    expect(settled.stdout).toBe('Nothing to change: the event store already matches the file.\n');
  }, TIMEOUT);

  test('a file that says what a runtime edit set adopts it, once: then a file edit of that field applies, and a later runtime edit is drift again', async () => {
    const kept = join(dir, 'kept.yaml');
    const keptEnv = { ...env, SWITCHYARD_CONFIG: kept };
    const first = await startServer(env);
    let adoption: { actor: string; stream: string; data: unknown };
    try {
      const admin = new AdminClient(first.url, ADMIN_TOKEN);
      expect((await admin.put('/aliases/chat', { routes: [{ deployment: 'primary', priority: 0 }], policy: { maxAttempts: 2, ttftTimeoutMs: 5000 } })).status).toBe(200);
      expect((await admin.put('/tenants/acme/limits', { rpm: 100 })).status).toBe(200);
      const exported = await admin.get('/config/export');
      expect(exported.status).toBe(200);
      writeFileSync(kept, exported.json.yaml);
      const adopted = async () => (await admin.get('/audit?action=ConfigurationAdopted')).json.data as Array<{ actor: string; stream: string; data: unknown }>;

      // A dry run says what it would adopt, field by field, and records nothing.
      const dry = await admin.post('/config/apply', { yaml: exported.json.yaml, source: kept, dryRun: true });
      expect(dry.status).toBe(200);
      const expected = [
        { path: 'tenants[0]', definition: 'tenant acme', field: 'limits.rpm', value: 100, changedBy: expect.stringMatching(/^admin:/), changedAt: expect.any(String), message: expect.stringMatching(/^tenants\[0\] tenant acme: limits\.rpm: 100 \(set by admin:\S+ at 20\d\d-/) },
        { path: 'aliases[0]', definition: 'alias chat', field: 'policy.maxAttempts', value: 2, changedBy: expect.stringMatching(/^admin:/), changedAt: expect.any(String), message: expect.stringMatching(/^aliases\[0\] alias chat: policy\.maxAttempts: 2 \(set by admin:/) },
      ];
      expect(dry.json).toEqual({ steps: [], appended: 0, drift: [], adoptions: expected });
      expect(await adopted()).toEqual([]);

      // The real apply records one ConfigurationAdopted and nothing else; the control-plane audit lists it with the file as the actor.
      const applied = await admin.post('/config/apply', { yaml: exported.json.yaml, source: kept });
      expect(applied.json).toEqual({ steps: [], appended: 1, drift: [], adoptions: expected });
      const audit = await adopted();
      expect(audit).toHaveLength(1);
      adoption = audit[0];
      expect(adoption).toMatchObject({
        actor: `config:${kept}`, stream: 'configuration',
        data: {
          source: kept, definitions: [
            { stream: 'tenant-acme', fields: [{ field: 'limits.rpm', eventId: expect.any(String), actor: expect.stringMatching(/^admin:/), recordedAt: expect.any(String) }] },
            { stream: 'alias-chat', fields: [{ field: 'policy.maxAttempts', eventId: expect.any(String), actor: expect.stringMatching(/^admin:/), recordedAt: expect.any(String) }] },
          ],
        },
      });
      // No values: not the adopted rpm (100) as a JSON value anywhere (event ids may hold the digits), nor a secret.
      expect(JSON.stringify(adoption.data)).not.toMatch(/"value"|:100[,}\]]|ownership-upstream-secret/);

      // Applying it again adopts nothing: the fields are the file's.
      const again = await admin.post('/config/apply', { yaml: exported.json.yaml, source: kept });
      expect(again.json).toEqual({ steps: [], appended: 0, drift: [], adoptions: [] });
      expect(await adopted()).toHaveLength(1);
    } finally {
      await first.stop();
    }
    const byTheFile = await query<{ event_type: string }>(`SELECT event_type FROM events WHERE metadata->>'actor' = 'config:${kept}'`);
    expect(byTheFile.map((row) => row.event_type)).toEqual(['ConfigurationAdopted']);

    // An edit of the adopted field in the file now applies, with no drift and no flag.
    writeFileSync(kept, readFileSync(kept, 'utf8').replace('maxAttempts: 2', 'maxAttempts: 4'));
    const edited = await runCli(['apply', '-f', kept], keptEnv);
    expect(edited.code).toBe(0);
    expect(edited.stderr).toContain('      policy.maxAttempts: 2 → 4\n');
    expect(edited.stdout).not.toContain('Drift:');
    expect(await running()).toEqual({ policy: expect.objectContaining({ maxAttempts: 4, ttftTimeoutMs: 5000 }), inputPer1M: '1', rpm: 100 });

    // A runtime edit after the adoption is the runtime's again: drift, kept.
    const second = await startServer(keptEnv);
    try {
      expect(second.output()).not.toMatch(/adopted|differs from the running state/);
      expect((await new AdminClient(second.url, ADMIN_TOKEN).put('/tenants/acme/limits', { rpm: 50 })).status).toBe(200);
    } finally {
      await second.stop();
    }
    const drift = await runCli(['apply', '-f', kept, '--dry-run'], keptEnv);
    expect(drift.stdout).toMatch(/^ {2}tenants\[0\] tenant acme: limits\.rpm: file 100, running 50 \(set by admin:\S+ at /m);

    // The file agreeing again is adopted at start: one line per adopted field in the start-up log, one event.
    const before = await controlEvents();
    writeFileSync(kept, readFileSync(kept, 'utf8').replace(/rpm: 100\b/, 'rpm: 50'));
    const third = await startServer(keptEnv);
    let log: string;
    try {
      log = third.output();
      // The durable projections pass the new event type: the audit chain hashes it, the ledger, spend and analytics
      // (they take request events only) skip it; none halts. Polled until caught up, with no deadline of its own.
      const admin = new AdminClient(third.url, ADMIN_TOKEN);
      let report = (await admin.get('/projections')).json as { projections: Array<{ name: string; kind: string; behind: number | null; halted: unknown }> };
      while (report.projections.some((p) => p.kind === 'singleton' && p.behind !== 0 && p.halted === null)) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        report = (await admin.get('/projections')).json;
      }
      expect(report.projections.filter((p) => p.halted !== null)).toEqual([]);
      expect(report.projections.map((p) => p.name)).toEqual(expect.arrayContaining(['audit-chain', 'cost-ledger']));
    } finally {
      await third.stop();
    }
    const lines = log.split('\n').filter((line) => line.includes(' adopted '));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/kept\.yaml adopted tenants\[0\] tenant acme: limits\.rpm: 50 \(set by admin:\S+ at 20[^)]+\): the file says the same as this runtime edit and owns the field again/);
    expect(log).not.toContain('differs from the running state');
    expect(await controlEvents()).toBe(before + 1);
    expect((await query<{ n: string }>(`SELECT count(*)::text AS n FROM events WHERE event_type = 'ConfigurationAdopted'`))[0].n).toBe('2');
  }, TIMEOUT);
});
