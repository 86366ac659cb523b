import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { openDatabase } from '../../src/kernel/database/open-database.js';
import { type CliResult, runCli } from '../support/cli-process.js';
import { createScratchDatabase } from '../support/services.js';
import { seedMigratedDataDir } from '../support/migrated-template.js';

/**
 * `switchyard apply -f FILE` and `switchyard keys …` as an operator runs them: separate processes on one
 * event store, checked against what the event log holds. The store is a scratch PostgreSQL database when
 * DATABASE_URL is set, else the embedded PGlite in a data directory (slower to open per process).
 */
const postgresUrl = process.env.DATABASE_URL || null;
const TIMEOUT = postgresUrl ? 60_000 : 240_000;
const BASE = (extra = '') => `
providers:
  - id: upstream
    type: openai-compatible
    baseUrl: https://llm.example.com/v1
    apiKey: env:APPLY_TEST_UPSTREAM_KEY
deployments:
  - id: big
    provider: upstream
    model: model-big
    capabilities: [chat, streaming, tools]
    contextWindow: 128000
    maxOutputTokens: 8192
    price: { inputPer1M: "3.00", outputPer1M: "15.00" }
  - id: small
    provider: upstream
    model: model-small
    capabilities: [chat, streaming]
    contextWindow: 32000
    maxOutputTokens: 4096
    price: { inputPer1M: "0.25", outputPer1M: "1.25" }
aliases:
  - name: smart
    routes:
      - { deployment: big, priority: 0 }
      - { deployment: small, priority: 1 }
  - name: quick
    routes:
      - { deployment: small, priority: 0 }
tenants:
  - id: acme
    limits: { rpm: 600 }
    budget: { monthlyUsd: "500", softPct: 80 }
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:APPLY_TEST_GATEWAY_KEY
    aliases: [smart, quick]
${extra}`;

describe('switchyard apply and keys (CLI)', () => {
  let dir: string;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let scratch: { url: string; drop: () => Promise<void> } | null = null;
  const gatewayKey = generateApiKey();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-apply-'));
    dataDir = join(dir, 'data');
    scratch = postgresUrl ? await createScratchDatabase(postgresUrl) : null;
    if (!scratch) await seedMigratedDataDir(dataDir); // an embedded store without paying initdb and the migrations (migrated-template.ts)
    env = {
      ...process.env, SWITCHYARD_DATA_DIR: dataDir, DATABASE_URL: scratch?.url ?? '', LOG_LEVEL: 'warn',
      APPLY_TEST_UPSTREAM_KEY: 'apply-upstream-secret-4242', APPLY_TEST_GATEWAY_KEY: gatewayKey,
    };
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await scratch?.drop();
  });

  function file(name: string, yaml: string): string {
    const path = join(dir, name);
    writeFileSync(path, yaml);
    return path;
  }

  async function events(): Promise<Array<{ stream_id: string; event_type: string; data: string; metadata: string }>> {
    const database = await openDatabase({ databaseUrl: scratch?.url ?? null, dataDir });
    try {
      return await database.query(`SELECT stream_id, event_type, data::text AS data, metadata::text AS metadata FROM events ORDER BY global_position`);
    } finally {
      await database.close();
    }
  }

  const apply = (path: string, ...flags: string[]): Promise<CliResult> => runCli(['apply', '-f', path, ...flags], env);

  test('a first apply appends the events, reporting progress per step', async () => {
    const result = await apply(file('base.yaml', BASE()));
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    const progress = result.stderr.split('\n').filter((line) => /^\[\d+\/\d+\] /.test(line));
    expect(progress[0]).toMatch(/^\[1\/(\d+)\] register provider upstream$/);
    const total = Number(/^\[1\/(\d+)\]/.exec(progress[0])![1]);
    expect(progress).toHaveLength(total);
    expect(progress.at(-1)).toBe(`[${total}/${total}] issue key acme-app`);
    const log = await events();
    expect(result.stdout).toContain(`Applied ${total} change(s): ${log.length} event(s) appended.`);
    expect(log.map((e) => e.event_type)).toEqual([
      'ProviderRegistered', 'DeploymentRegistered', 'PriceScheduled', 'DeploymentRegistered', 'PriceScheduled',
      'TenantCreated', 'TenantLimitsSet', 'TenantBudgetSet', 'AliasPublished', 'AliasPublished', 'ApiKeyIssued',
    ]);
    for (const event of log) expect(JSON.parse(event.metadata).actor).toBe(`config:${join(dir, 'base.yaml')}`);
    const text = JSON.stringify(log);
    expect(text).not.toContain('apply-upstream-secret-4242');
    expect(text).not.toContain(gatewayKey);
  }, TIMEOUT);

  test('applying the same file again appends zero events', async () => {
    const before = await events();
    const result = await apply(join(dir, 'base.yaml'));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Nothing to change');
    expect(await events()).toHaveLength(before.length);
  }, TIMEOUT);

  test('--dry-run prints the plan with YAML paths and appends nothing; the real apply then does exactly that', async () => {
    const changed = BASE()
      .replace('maxOutputTokens: 8192', 'maxOutputTokens: 16384')
      .replace('- { deployment: small, priority: 0 }', '- { deployment: small, priority: 0 }\n      - { deployment: big, priority: 1 }');
    const path = file('changed.yaml', changed);
    const before = await events();
    const plan = await apply(path, '--dry-run');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('Plan (dry run, nothing appended): 2 change(s)');
    expect(plan.stdout).toContain('update deployment big   (deployments[0])');
    expect(plan.stdout).toContain('publish alias quick   (aliases[1])');
    expect(await events()).toHaveLength(before.length);

    const applied = await apply(path);
    expect(applied.stdout).toContain('Applied 2 change(s): 2 event(s) appended.');
    const after = await events();
    expect(after.slice(before.length).map((e) => e.event_type)).toEqual(['DeploymentUpdated', 'AliasPublished']);
    expect(JSON.parse(after.at(-1)!.data)).toMatchObject({ alias: 'quick', version: 2 });
  }, TIMEOUT);

  test('problems in the file are reported with their YAML paths and append nothing', async () => {
    const before = await events();
    const invalid = BASE()
      .replace('contextWindow: 32000', 'contextWindow: lots')
      .replace('- { deployment: big, priority: 0 }', '- { deployment: huge, priority: 0 }')
      .replace('limits: { rpm: 600 }', 'limits: { rpm: 600, burst: 9 }');
    const result = await apply(file('invalid.yaml', invalid));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('deployments[1].contextWindow: must be a non-negative integer');
    expect(result.stderr).toContain("aliases[0].routes[0].deployment: names deployment 'huge', which this file does not declare (a file refers only to what it declares; `switchyard config export` writes the running definitions as one)");
    expect(result.stderr).toContain('tenants[0].limits.burst: unknown field');

    const literal = await apply(file('literal.yaml', BASE().replace('apiKey: env:APPLY_TEST_UPSTREAM_KEY', 'apiKey: sk-literal-in-yaml-777')));
    expect(literal.code).toBe(1);
    expect(literal.stderr).toContain('providers[0].apiKey');
    expect(literal.stderr).not.toContain('sk-literal-in-yaml-777');

    const unsafe = await apply(file('unsafe.yaml', BASE().replace('https://llm.example.com/v1', 'http://169.254.169.254/v1')));
    expect(unsafe.code).toBe(1);
    expect(unsafe.stderr).toMatch(/providers\[0\]: baseUrl points at a cloud metadata address/);
    const unsafeDry = await apply(join(dir, 'unsafe.yaml'), '--dry-run');
    expect(unsafeDry.code).toBe(1);
    expect(unsafeDry.stderr).toMatch(/providers\[0\]: baseUrl points at a cloud metadata address/);
    const loopback = await apply(file('loopback.yaml', BASE().replace('https://llm.example.com/v1', 'http://[::ffff:127.0.0.1]:8000/v1')));
    expect(loopback.code).toBe(1);
    expect(loopback.stderr).toMatch(/providers\[0\]: baseUrl points at a loopback address; set allowPrivateNetwork: true/);

    const missingSecret = await apply(file('secret.yaml', BASE().replace('env:APPLY_TEST_UPSTREAM_KEY', 'env:APPLY_TEST_NOT_SET')));
    expect(missingSecret.code).toBe(1);
    expect(missingSecret.stderr).toMatch(/providers\[0\]: apiKey env:APPLY_TEST_NOT_SET cannot be resolved/);
    const gatewaySetting = await apply(file('exfiltrate.yaml', BASE().replace('env:APPLY_TEST_UPSTREAM_KEY', 'env:DATABASE_URL')));
    expect(gatewaySetting.code).toBe(1);
    expect(gatewaySetting.stderr).toMatch(/providers\[0\]: apiKey env:DATABASE_URL cannot be resolved: it is not set, or SWITCHYARD_SECRET_ENV does not allow it/);
    expect(await events()).toHaveLength(before.length);
  }, TIMEOUT);

  test('--prune retires, revokes and removes what the file no longer declares; without it nothing is removed', async () => {
    const trimmed = BASE()
      .replace(/ {2}- name: quick\n {4}routes:\n {6}- \{ deployment: small, priority: 0 \}\n/, '')
      .replace(/apiKeys:[\s\S]*$/, '');
    const path = file('trimmed.yaml', trimmed.replace('maxOutputTokens: 8192', 'maxOutputTokens: 16384'));
    const before = await events();
    const plain = await apply(path);
    expect(plain.code).toBe(0);
    expect(await events()).toHaveLength(before.length);

    const dry = await apply(path, '--prune', '--dry-run');
    expect(dry.stdout).toContain('revoke key acme-app (not declared)');
    expect(dry.stdout).toContain('retire alias quick (not declared)');
    expect(await events()).toHaveLength(before.length);
    const pruned = await apply(path, '--prune');
    expect(pruned.code).toBe(0);
    const added = (await events()).slice(before.length);
    expect(added.map((e) => `${e.event_type} ${e.stream_id}`)).toEqual(['ApiKeyRevoked apikey-acme-app', 'AliasRetired alias-quick']);
    const again = await apply(path, '--prune');
    expect(again.stdout).toContain('Nothing to change');
  }, TIMEOUT);

  test('keys issue prints the key once on stdout; keys revoke refuses a second revocation', async () => {
    const issued = await runCli(['keys', 'issue', '--tenant', 'acme', '--id', 'cli-key', '--scope', 'inference', '--alias', 'smart', '--rpm', '10'], env);
    expect(issued.code).toBe(0);
    const key = issued.stdout.trim();
    expect(key).toMatch(/^sk-sy-[0-9A-Za-z]{32}$/);
    expect(issued.stderr).toContain('Issued key cli-key');
    expect(issued.stderr).not.toContain(key);
    const log = await events();
    const event = log.find((e) => e.stream_id === 'apikey-cli-key')!;
    expect(JSON.parse(event.data)).toMatchObject({ tenantId: 'acme', scopes: ['inference'], aliases: ['smart'], limits: { rpm: 10 } });
    expect(JSON.parse(event.metadata).actor).toMatch(/^cli:/);
    expect(JSON.stringify(log)).not.toContain(key);

    const unknownTenant = await runCli(['keys', 'issue', '--tenant', 'nobody'], env);
    expect(unknownTenant.code).toBe(1);
    expect(unknownTenant.stdout).toBe('');
    expect(unknownTenant.stderr).toContain('Tenant nobody does not exist');

    expect((await runCli(['keys', 'revoke', 'cli-key', '--reason', 'test'], env)).code).toBe(0);
    const twice = await runCli(['keys', 'revoke', 'cli-key'], env);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('already revoked');
  }, TIMEOUT);

  test('the admin:platform scope is accepted by keys issue; an unknown scope is refused by keys issue and apply, appending nothing', async () => {
    const issued = await runCli(['keys', 'issue', '--tenant', 'acme', '--id', 'platform-cli', '--scope', 'admin:platform'], env);
    expect(issued.code).toBe(0);
    const event = (await events()).find((e) => e.stream_id === 'apikey-platform-cli')!;
    expect(JSON.parse(event.data)).toMatchObject({ tenantId: 'acme', scopes: ['admin:platform'] });

    const before = await events();
    const unknown = await runCli(['keys', 'issue', '--tenant', 'acme', '--id', 'bad-scope', '--scope', 'inference', '--scope', 'platform'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain("unknown scope 'platform' (known: inference, models:read, usage:read, admin, admin:platform)");
    const yaml = await apply(file('bad-scope.yaml', BASE().replace('    aliases: [smart, quick]', '    aliases: [smart, quick]\n    scopes: [inference, "admin:everything"]')));
    expect(yaml.code).toBe(1);
    expect(yaml.stderr).toContain("apiKeys[0].scopes[1]: unknown scope 'admin:everything' (known: inference, models:read, usage:read, admin, admin:platform)");
    expect(await events()).toHaveLength(before.length);
  }, TIMEOUT);

  test('content policies: apply --dry-run plans them, apply defines and attaches them, content-policies list and show print them', async () => {
    const withPolicy = file('policy.yaml', `${BASE()}
contentPolicies:
  - id: pii-cli
    input: { email: mask, card: block }
`.replace('  - id: acme\n', '  - id: acme\n    contentPolicy: pii-cli\n'));
    const before = await events();
    const dry = await apply(withPolicy, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('define content policy pii-cli   (contentPolicies[0])');
    expect(dry.stdout).toContain('attach content policy pii-cli to tenant acme   (tenants[0].contentPolicy)');
    expect(await events()).toHaveLength(before.length);

    expect((await apply(withPolicy)).code).toBe(0);
    // (The earlier tests left the file's other definitions changed; apply restores those too.)
    expect((await events()).slice(before.length).map((e) => `${e.event_type} ${e.stream_id}`).filter((line) => /ContentPolic/.test(line)))
      .toEqual(['ContentPolicyDefined content-policy-pii-cli', 'TenantContentPolicySet tenant-acme']);
    const list = await runCli(['content-policies', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toBe('pii-cli\tv1\tlive\tattached to tenant acme\n');
    const show = await runCli(['content-policies', 'show', 'pii-cli'], env);
    expect(JSON.parse(show.stdout)).toMatchObject({ id: 'pii-cli', version: 1, input: { email: 'mask', card: 'block' }, tokenScope: 'request', attachedTo: ['tenant acme'] });
    const missing = await runCli(['content-policies', 'show', 'nope'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('content policy nope does not exist');
  }, TIMEOUT);
});
