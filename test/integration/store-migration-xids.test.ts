import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { spoolStoreKey } from '../../src/kernel/event-store/spool/spool-settings.js';
import { runCli } from '../support/cli-process.js';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { type TestGateway, defaultYaml, startTestGateway } from '../support/gateway-harness.js';
import { OwnPostgres, ownPostgresAvailable } from '../support/own-postgres.js';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';
const describeWithServers = ownPostgresAvailable() ? describe : describe.skip;

/** Where the first server's transaction counter starts: far ahead of a new cluster's (a few hundred). */
const PRODUCTION_XID = 120_000;

/** Every gateway of the suite declares the same key (one secret: a declared key's secret never changes by apply). */
const KEY_ENV = 'MIGRATE_XIDS_SUITE_KEY';
const yaml = (mockUrl: string) => defaultYaml(mockUrl, KEY_ENV);

async function chat(gw: TestGateway, content: string): Promise<Response> {
  const response = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${process.env[KEY_ENV]}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content }] }),
  });
  await response.arrayBuffer();
  return response;
}

async function sqlOn<R = Record<string, unknown>>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as R[];
  } finally {
    await client.end();
  }
}

/**
 * A log written by a cluster whose transaction counter is far ahead (a production server), dumped with
 * pg_dump and restored into a new cluster: the new server refuses to start on it, and both fixes its message
 * names work. The same log also goes the other way, into a new embedded data directory (a laptop copy).
 */
describeWithServers('a log restored behind its server’s transaction counter, and the move back to an embedded store', () => {
  const root = mkdtempSync(join(tmpdir(), 'switchyard-migrate-xids-'));
  let production: OwnPostgres;
  let restored: OwnPostgres;
  /** A new cluster for the migrated copy: its counter starts a few hundred ids in. */
  let fresh: OwnPostgres;
  let requestIds: string[];

  beforeAll(async () => {
    process.env[KEY_ENV] = generateApiKey();
    production = await OwnPostgres.create({ nextTransactionId: PRODUCTION_XID });
    restored = await OwnPostgres.create();
    fresh = await OwnPostgres.create();
    const gw = await startTestGateway({ databaseUrl: production.url(), yaml });
    try {
      requestIds = [];
      for (let i = 0; i < 4; i++) {
        const response = await chat(gw, `production ${i}`);
        expect(response.status).toBe(200);
        requestIds.push(response.headers.get('x-request-id')!);
      }
      await gw.gateway.platform.committer.drain();
      await gw.gateway.platform.runner.catchUp();
    } finally {
      await gw.close();
    }
    const dump = join(root, 'production.sql');
    await run(join(BIN, 'pg_dump'), ['--no-owner', '-f', dump, `--dbname=${production.url()}`]);
    await run(join(BIN, 'psql'), ['-q', '-v', 'ON_ERROR_STOP=1', '-f', dump, `--dbname=${restored.url()}`]);
  }, 180_000);

  afterAll(async () => {
    await production?.remove();
    await restored?.remove();
    await fresh?.remove();
    rmSync(root, { recursive: true, force: true });
  });

  test('a server refuses to start on the restored log and says what happened and how to fix it', async () => {
    const [newest] = await sqlOn<{ x: string }>(restored.url(), `SELECT e.transaction_id::text AS x FROM events e ORDER BY e.transaction_id DESC LIMIT 1`);
    expect(BigInt(newest.x)).toBeGreaterThan(BigInt(PRODUCTION_XID));
    await expect(startTestGateway({ databaseUrl: restored.url(), yaml })).rejects.toThrow(
      new RegExp(`newest event was written by transaction ${newest.x}, but this database server's next transaction id is \\d+`),
    );
    const cli = await runCli(['events', 'list', '--limit', '1'], { ...process.env, DATABASE_URL: restored.url() });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`pg_resetwal -x ${BigInt(newest.x) + 1n} -D`);
    expect(cli.stderr).toContain('switchyard migrate --to postgres://');
    // Nothing was appended by the refused starts.
    expect(await sqlOn(restored.url(), `SELECT count(*)::int AS n FROM events WHERE transaction_id > $1::xid8`, [newest.x])).toEqual([{ n: 0 }]);
  }, 120_000);

  test('fix one: switchyard migrate into a new cluster keeps the transaction ids, moves that counter past them, and verifies', async () => {
    const moved = fresh.url();
    const result = await runCli(['migrate', '--to', moved, '--json'], { ...process.env, DATABASE_URL: restored.url() });
    expect(result.stderr).toContain('ahead of its server');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.ok).toBe(true);
    expect(report.transactionIdsTaken).toBeGreaterThan(PRODUCTION_XID - 2_000);
    const gw = await startTestGateway({ databaseUrl: moved, yaml });
    try {
      const response = await chat(gw, 'after the move');
      expect(response.status).toBe(200);
      await gw.gateway.platform.committer.drain();
      const [order] = await sqlOn<{ last: string }>(moved, `SELECT e.stream_id AS last FROM events e ORDER BY e.transaction_id DESC, e.global_position DESC LIMIT 1`);
      expect(order.last).toBe(`request-${response.headers.get('x-request-id')}`);
    } finally {
      await gw.close();
    }
  }, 180_000);

  test('fix two: pg_resetwal -x as the message says, and the restored database serves', async () => {
    const [newest] = await sqlOn<{ x: string }>(restored.url(), `SELECT e.transaction_id::text AS x FROM events e ORDER BY e.transaction_id DESC LIMIT 1`);
    await restored.stop();
    await restored.setNextTransactionId(Number(newest.x) + 1);
    await restored.start();
    const gw = await startTestGateway({ databaseUrl: restored.url(), yaml });
    try {
      expect((await chat(gw, 'after pg_resetwal')).status).toBe(200);
    } finally {
      await gw.close();
    }
  }, 180_000);

  test('the reverse: the PostgreSQL log into a new embedded data directory, verified, and readable there', async () => {
    const dataDir = join(root, 'laptop');
    // Answered requests still in an outage spool for the source are not in its log: refused until drained.
    const spoolDir = join(root, 'spool');
    const slot = join(spoolDir, spoolStoreKey(production.url()), '0');
    mkdirSync(slot, { recursive: true });
    writeFileSync(join(slot, 'segment-000000000001.log'), 'x'.repeat(100));
    const spooled = await runCli(['migrate', '--to-data-dir', dataDir], { ...process.env, DATABASE_URL: production.url(), SWITCHYARD_SPOOL_DIR: spoolDir });
    expect(spooled.code).toBe(1);
    expect(spooled.stderr).toContain(`the outage spool in ${spoolDir} holds 100 bytes of answered requests that are not in the source's log yet`);
    expect(existsSync(dataDir)).toBe(false);
    const result = await runCli(['migrate', '--to-data-dir', dataDir, '--json'], { ...process.env, DATABASE_URL: production.url() });
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.ok).toBe(true);
    expect(report.target).toBe(`the embedded store in ${dataDir}`);
    // A copy into a data directory leaves its source unmarked: production keeps serving from it.
    expect(report.sourceMarkedMoved).toBe(false);
    expect(report.checks.every((check: { ok: boolean }) => check.ok)).toBe(true);
    const laptop = { ...process.env, DATABASE_URL: '', SWITCHYARD_DATA_DIR: dataDir };
    const verified = await runCli(['audit', 'verify'], laptop);
    expect(verified.stdout).toContain('audit chain OK');
    expect(verified.code).toBe(0);
    const shown = await runCli(['requests', 'show', requestIds[0]], laptop);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(requestIds[0]);
    // A second run into the same directory is refused: it is no longer empty.
    const again = await runCli(['migrate', '--to-data-dir', dataDir], { ...process.env, DATABASE_URL: production.url() });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('is not empty: events:');
  }, 180_000);
});
