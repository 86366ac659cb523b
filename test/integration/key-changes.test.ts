import { readFileSync, writeFileSync } from 'node:fs';
import { type TestGateway, defaultYaml, postJson, startTestGateway } from '../support/gateway-harness.js';
import { AdminClient } from '../support/admin-client.js';
// The CLI in this process (cli-in-process.ts): what apply, keys issue and keys rotate change on the two
// nodes is the subject here, not the CLI's process.
import { runCliInProcess as runCli } from '../support/cli-in-process.js';
import { createScratchDatabase, requireService } from '../support/services.js';

const databaseUrl = requireService('DATABASE_URL');
const describeWithPostgres = databaseUrl ? describe : describe.skip;
const ADMIN_TOKEN = 'key-changes-admin-token-0123456789';

/** Polls until `check` holds; returns how long it took. */
async function within(ms: number, check: () => Promise<boolean>, what: string): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - started;
}

/**
 * Keys that can change, on two nodes sharing one event store: `apply` of a YAML that widens a key's
 * alias allowlist (same id, same secret) takes effect on every node within a second, an update narrows
 * it again, a rotation gives the key a new secret with an overlap window, and a key for an alias that
 * does not exist is refused.
 */
describeWithPostgres('keys that can change (two nodes)', () => {
  let scratch: { url: string; drop: () => Promise<void> };
  let nodeA: TestGateway;
  let nodeB: TestGateway;
  let config: string;
  const yaml = (mockUrl: string, keyEnv: string) =>
    defaultYaml(mockUrl, keyEnv).replace('    scopes: [inference, models:read]', '    scopes: [inference, models:read]\n    aliases: [chat]');
  const ask = (gw: TestGateway, key: string, model: string) =>
    postJson({ ...gw, key }, '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Hello' }] });
  const env = () => ({ ...process.env, DATABASE_URL: scratch.url, SWITCHYARD_DATA_DIR: ':memory:', LOG_LEVEL: 'warn' });

  beforeAll(async () => {
    scratch = await createScratchDatabase(databaseUrl!);
    nodeA = await startTestGateway({ databaseUrl: scratch.url, yaml, environment: { nodeId: 'keys-a', adminToken: ADMIN_TOKEN } });
    config = readFileSync(nodeA.configPath, 'utf8');
    nodeB = await startTestGateway({ databaseUrl: scratch.url, yaml: () => config, environment: { nodeId: 'keys-b', adminToken: ADMIN_TOKEN } });
  }, 60_000);
  afterAll(async () => {
    await nodeB?.close();
    await nodeA?.close();
    await scratch?.drop();
  });

  test('apply of a YAML adding an alias to an existing key (same id, same secret) works on both nodes within 1 s', async () => {
    for (const gw of [nodeA, nodeB]) expect((await ask(gw, nodeA.key, 'solo')).status).toBe(404);
    const widened = nodeA.configPath.replace(/\.yaml$/, '-widened.yaml');
    writeFileSync(widened, config.replace('    aliases: [chat]', '    aliases: [chat, solo]'));
    const applied = await runCli(['apply', '-f', widened], env());
    expect(applied.stderr).toContain('update key acme-app (aliases)');
    expect(applied.code).toBe(0);
    const tookA = await within(1_000, async () => (await ask(nodeA, nodeA.key, 'solo')).status === 200, 'node A serves the new alias');
    const tookB = await within(1_000, async () => (await ask(nodeB, nodeA.key, 'solo')).status === 200, 'node B serves the new alias');
    expect(Math.max(tookA, tookB)).toBeLessThanOrEqual(1_000);
    // One ApiKeyUpdated, the key's id and hash unchanged.
    const rows = await nodeA.gateway.platform.database.query<{ event_type: string }>(
      `SELECT event_type FROM events WHERE stream_id = 'apikey-acme-app' ORDER BY stream_version`);
    expect(rows.map((r) => r.event_type)).toEqual(['ApiKeyIssued', 'ApiKeyUpdated']);

    // Applying the same file again changes nothing.
    const again = await runCli(['apply', '-f', widened], env());
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain('update key');
  }, 30_000);

  test('an update narrows the key again; an alias that does not exist is refused with 422 and nothing changes', async () => {
    const admin = new AdminClient(nodeA.url, ADMIN_TOKEN);
    const refused = await admin.patch('/keys/acme-app', { aliases: ['chat', 'no-such-alias'] });
    expect(refused.status).toBe(422);
    expect(refused.json.error.message).toContain("'no-such-alias'");
    expect((await ask(nodeB, nodeA.key, 'solo')).status).toBe(200);
    const narrowed = await admin.patch('/keys/acme-app', { aliases: ['chat'], limits: { rpm: 100 } });
    expect(narrowed.status).toBe(200);
    expect(narrowed.json).toMatchObject({ aliases: ['chat'], limits: { rpm: 100 }, appended: ['ApiKeyUpdated'] });
    await within(1_000, async () => (await ask(nodeB, nodeA.key, 'solo')).status === 404, 'node B refuses the removed alias');
    expect((await admin.post('/keys', { tenant: 'acme', aliases: ['typo'] })).status).toBe(422);
    const cli = await runCli(['keys', 'issue', '--tenant', 'acme', '--alias', 'typo'], env());
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain("No published alias 'typo'");
    expect(cli.stdout).toBe('');
  }, 30_000);

  test('rotation: a new secret on every node; the previous one works during the overlap only', async () => {
    const admin = new AdminClient(nodeA.url, ADMIN_TOKEN);
    const rotated = await admin.post('/keys/acme-app/rotate', { overlapSeconds: 2 });
    expect(rotated.status).toBe(200);
    const fresh: string = rotated.json.key;
    expect(fresh).not.toBe(nodeA.key);
    await within(1_000, async () => (await ask(nodeB, fresh, 'chat')).status === 200, 'node B accepts the new secret');
    expect((await ask(nodeB, nodeA.key, 'chat')).status).toBe(200); // inside the overlap
    await within(4_000, async () => (await ask(nodeA, nodeA.key, 'chat')).status === 401, 'the old secret stops after the overlap');
    const old = await ask(nodeB, nodeA.key, 'chat');
    expect(old.status).toBe(401);
    expect(old.json.error.message).toContain('rotated');
    expect((await ask(nodeA, fresh, 'chat')).status).toBe(200);

    // Without an overlap (the CLI's default) the previous secret stops at once.
    const cli = await runCli(['keys', 'rotate', 'acme-app'], env());
    expect(cli.code).toBe(0);
    const newest = cli.stdout.trim();
    await within(1_000, async () => (await ask(nodeA, newest, 'chat')).status === 200, 'node A accepts the newest secret');
    await within(1_000, async () => (await ask(nodeB, fresh, 'chat')).status === 401, 'node B refuses the previous secret');
  }, 30_000);
});
