import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { runCli, startServer } from '../support/cli-process.js';
import { createScratchDatabase, requireService } from '../support/services.js';
import { SPOOL_PORTS, freePortIn } from '../support/port-range.js';
import { seedEmbeddedDataDir } from '../support/pglite-template.js';

/**
 * `switchyard admin-token reset` on the embedded default (issue 13 item 7): a first start that fails
 * after generating the admin token says how to recover; the reset (offline) revokes the stored tokens,
 * issues one and prints it once; it refuses while a server runs; the log records each reset.
 */
describe('admin-token reset (embedded PGlite, real processes)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-token-reset-'));
    env = { ...process.env, SWITCHYARD_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'warn', DATABASE_URL: '', ADMIN_TOKEN: '' };
    await seedEmbeddedDataDir(join(dir, 'data'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('a failed first start points at the command; the reset issues a token that works, once; a running server makes it refuse', async () => {
    // A file with a mistake stops the first start before the admin token is generated: nothing is lost.
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'aliases:\n  - name: chat\n    routes:\n      - { deployment: nowhere }\n');
    const invalid = await runCli(['serve'], { ...env, SWITCHYARD_CONFIG: bad, PORT: String(await freePortIn(SPOOL_PORTS)) });
    expect(invalid.code).not.toBe(0);
    expect(invalid.stderr).toContain("aliases[0].routes[0].deployment: names deployment 'nowhere', which this file does not declare (a file refers only to what it declares; `switchyard config export` writes the running definitions as one)");
    expect(invalid.stdout + invalid.stderr).not.toContain('admin-token reset');
    // A valid file that the apply refuses (a key for an alias neither published nor declared) fails after the token
    // was generated — the start that generates it is this one, so the one above generated none — and says how to recover.
    const refusedFile = join(dir, 'refused.yaml');
    writeFileSync(refusedFile, 'tenants:\n  - id: t1\napiKeys:\n  - id: k1\n    tenant: t1\n    key: env:SY_TOKEN_RESET_KEY\n    aliases: [ghost]\n');
    const failed = await runCli(['serve'], { ...env, SWITCHYARD_CONFIG: refusedFile, SY_TOKEN_RESET_KEY: `sk-sy-${'a'.repeat(32)}`, PORT: String(await freePortIn(SPOOL_PORTS)) });
    expect(failed.code).not.toBe(0);
    const failedOutput = failed.stdout + failed.stderr;
    expect(failedOutput).toContain('ghost');
    expect(failedOutput).toContain('This start generated the admin token but failed before showing it');
    expect(failedOutput).toContain('switchyard admin-token reset');
    expect(failedOutput).not.toMatch(/sy-admin-[0-9A-Za-z]{40}/); // the token is never shown after a failure

    const reset = await runCli(['admin-token', 'reset'], env);
    expect(reset.code).toBe(0);
    expect(reset.stdout).toMatch(/^sy-admin-[0-9A-Za-z]{40}\n$/);
    expect(reset.stderr).toMatch(/Revoked 1 admin token\(s\) \(bootstrap\); issued reset-\S+\. This is the only time it is shown/);
    const token = reset.stdout.trim();

    const server = await startServer(env, await freePortIn(SPOOL_PORTS));
    try {
      // No second token is generated beside the reset one.
      expect(server.output()).not.toContain('Admin token (shown once');
      const status = (bearer: string) => fetch(`${server.url}/admin/v1/status`, { headers: { authorization: `Bearer ${bearer}` } });
      expect((await status(token)).status).toBe(200);
      expect((await status(`sy-admin-${'x'.repeat(40)}`)).status).toBe(401);

      const refused = await runCli(['admin-token', 'reset'], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/A Switchyard process \(pid \d+\) is running on the data directory .* Stop it first/);
      expect(refused.stdout).toBe('');
      expect((await status(token)).status).toBe(200);
    } finally {
      await server.stop();
    }

    const withEnvToken = await runCli(['admin-token', 'reset'], { ...env, ADMIN_TOKEN: 'a-configured-token-of-24ch' });
    expect(withEnvToken.code).toBe(1);
    expect(withEnvToken.stderr).toMatch(/ADMIN_TOKEN is set/);

    const again = await runCli(['admin-token', 'reset'], env);
    expect(again.code).toBe(0);
    const second = again.stdout.trim();
    expect(second).not.toBe(token);
    expect(again.stderr).toMatch(/Revoked 1 admin token\(s\) \(reset-\S+\)/);

    const events = await runCli(['events', 'read', 'admin-tokens'], env);
    expect(events.code).toBe(0);
    const log = events.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(log.map((e) => [e.type, e.data.tokenId.replace(/^reset-.*/, 'reset')])).toEqual([
      ['AdminTokenRevoked', 'bootstrap'], ['AdminTokenIssued', 'reset'], ['AdminTokenRevoked', 'reset'], ['AdminTokenIssued', 'reset'],
    ]);
    expect(log[1].data.tokenId).toBe(log[2].data.tokenId);
    expect(log.every((e) => /^cli:/.test(e.metadata.actor))).toBe(true);
    // Neither the token nor its hash is in the log.
    expect(events.stdout).not.toContain(token);
    expect(events.stdout).not.toMatch(/[0-9a-f]{64}/);

    const restarted = await startServer(env, await freePortIn(SPOOL_PORTS));
    try {
      const status = (bearer: string) => fetch(`${restarted.url}/admin/v1/status`, { headers: { authorization: `Bearer ${bearer}` } });
      expect((await status(second)).status).toBe(200);
      expect((await status(token)).status).toBe(401); // revoked by the second reset
    } finally {
      await restarted.stop();
    }
  }, 180_000);
});

const baseUrl = requireService('DATABASE_URL');
(baseUrl ? describe : describe.skip)('admin-token reset on PostgreSQL', () => {
  test('refuses while another Switchyard session is connected; works once none is', async () => {
    const db = await createScratchDatabase(baseUrl!);
    const env = { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'warn', ADMIN_TOKEN: '' };
    const other = new pg.Client({ connectionString: db.url, application_name: 'switchyard' });
    await other.connect();
    try {
      const refused = await runCli(['admin-token', 'reset'], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/1 Switchyard session\(s\) are connected to this event store.*Stop it first/);
      expect(refused.stdout).toBe('');
      await other.end();
      const reset = await runCli(['admin-token', 'reset'], env);
      expect(reset.code).toBe(0);
      expect(reset.stdout).toMatch(/^sy-admin-[0-9A-Za-z]{40}\n$/);
      expect(reset.stderr).toMatch(/No admin token was stored; issued reset-/);
      const check = new pg.Client({ connectionString: db.url });
      await check.connect();
      const { rows } = await check.query<{ token_id: string }>('SELECT token_id FROM admin_tokens');
      await check.end();
      expect(rows.map((row) => row.token_id)).toEqual([expect.stringMatching(/^reset-/)]);
    } finally {
      await other.end().catch(() => undefined);
      await db.drop();
    }
  }, 60_000);
});
