import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import type { AppendRequest, RecordedEvent } from '../../src/kernel/event-store/event-store.js';
import { uuidv7 } from '../../src/kernel/ids.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import { MAIN, runCli } from '../support/cli-process.js';
import { startTestGateway, type TestGateway } from '../support/gateway-harness.js';
import { seedMigratedDataDir } from '../support/migrated-template.js';
import { createScratchDatabase, requireService } from '../support/services.js';

const databaseUrl = requireService('DATABASE_URL');
const describeWithPostgres = databaseUrl ? describe : describe.skip;

/**
 * The log the suite migrates: at least this many events. Three of migrate's 5,000-event pages (one target
 * transaction each) are what the properties need: a copy of several pages compared event by event, and a
 * copy killed after its first committed page that leaves a prefix and resumes for the rest. A 50,000-event
 * log showed the same in ten pages, at three times this suite's run time.
 */
const EVENTS = 15_000;
const TENANTS = ['acme', 'globex', 'initech'];
const KEY_ENV = 'MIGRATE_SUITE_KEY';
const AUDIT_KEY_ENV = 'MIGRATE_SUITE_AUDIT_KEY';

/** Three tenants with budgets and a key each, two deployments with prices, two aliases: the control plane the log starts with. */
function yaml(mockUrl: string): string {
  return `
providers:
  - id: mock-upstream
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true
    apiKey: env:SY_TEST_UPSTREAM_KEY
deployments:
  - id: primary
    provider: mock-upstream
    model: model-primary
    capabilities: [chat, streaming]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "2.50", outputPer1M: "10.00", cachedInputPer1M: "1.25" }
  - id: backup
    provider: mock-upstream
    model: model-backup
    capabilities: [chat, streaming]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "0.15", outputPer1M: "0.60" }
aliases:
  - name: chat
    routes:
      - { deployment: primary, priority: 0 }
      - { deployment: backup, priority: 1 }
  - name: cheap
    routes:
      - { deployment: backup, priority: 0 }
tenants:
${TENANTS.map((t, i) => `  - id: ${t}\n    budget: { monthlyUsd: "${500 * (i + 1)}", softPct: 80 }`).join('\n')}
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${KEY_ENV}
    scopes: [inference, models:read]
`;
}

/** The whole log as stored, row by row: what must be equal, byte for byte, on both sides. */
const LOG_DIGEST_SQL = `SELECT count(*)::int AS n, md5(string_agg(concat_ws('|', global_position, transaction_id, stream_id, stream_version, event_id,
  event_type, schema_version, data::text, metadata::text, to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')), E'\\n'
  ORDER BY transaction_id, global_position)) AS digest FROM events`;
const LEDGER_SQL = `SELECT tenant_id, to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS n, sum(cost_usd)::text AS cost
  FROM cost_ledger GROUP BY 1, 2 ORDER BY tenant_id COLLATE "C", 2`;
const SPEND_SQL = `SELECT tenant_id, period, to_char(period_start AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS start, spent_usd::text AS spent
  FROM tenant_spend ORDER BY tenant_id COLLATE "C", period COLLATE "C", period_start`;
const HEAD_SQL = `SELECT c.sequence::int AS sequence, c.hash FROM audit_chain c ORDER BY c.sequence DESC LIMIT 1`;

interface StoreFacts {
  log: { n: number; digest: string };
  last: { transaction_id: string; global_position: string };
  head: { sequence: number; hash: string };
  ledger: unknown[];
  spend: unknown[];
  checkpoints: number;
  adminTokens: number;
}

async function facts(query: <R>(sql: string) => Promise<R[]>): Promise<StoreFacts> {
  const [log] = await query<{ n: number; digest: string }>(LOG_DIGEST_SQL);
  const [last] = await query<{ transaction_id: string; global_position: string }>(
    `SELECT e.transaction_id::text AS transaction_id, e.global_position::text AS global_position FROM events e ORDER BY e.transaction_id DESC, e.global_position DESC LIMIT 1`,
  );
  const [head] = await query<{ sequence: number; hash: string }>(HEAD_SQL);
  const [counts] = await query<{ checkpoints: number; tokens: number }>(
    `SELECT (SELECT count(*)::int FROM audit_checkpoints) AS checkpoints, (SELECT count(*)::int FROM admin_tokens) AS tokens`,
  );
  return { log, last, head, ledger: await query(LEDGER_SQL), spend: await query(SPEND_SQL), checkpoints: counts.checkpoints, adminTokens: counts.tokens };
}

async function factsOf(url: string): Promise<StoreFacts> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await facts(async <R>(sql: string) => (await client.query(sql)).rows as R[]);
  } finally {
    await client.end();
  }
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
 * Requests modelled on ones the gateway served (their events, with new ids, tenants, keys and costs): one
 * in six failed over to the backup after a 503, the rest succeeded at the first attempt.
 */
function syntheticRequests(templates: RecordedEvent[], count: number, offset: number): AppendRequest[] {
  const [admitted, attempt, completed] = ['RequestAdmitted', 'AttemptFinished', 'RequestCompleted'].map((type) => templates.find((e) => e.type === type)!);
  const requests: AppendRequest[] = [];
  for (let i = 0; i < count; i++) {
    const n = offset + i;
    const requestId = uuidv7(Date.now() - (count - i));
    const tenantId = TENANTS[n % TENANTS.length];
    const keyId = `${tenantId}-app`;
    const metadata = { ...admitted.metadata, actor: `key:${keyId}`, correlationId: requestId };
    const clone = (data: unknown, change: Record<string, unknown>) => ({ ...(structuredClone(data) as Record<string, unknown>), requestId, tenantId, keyId, ...change });
    const output = `0.${String(n % 997).padStart(6, '0')}000000`;
    const success = clone(attempt.data, {
      attempt: n % 6 === 0 ? 2 : 1,
      deploymentId: n % 6 === 0 ? 'backup' : 'primary',
      model: n % 6 === 0 ? 'model-backup' : 'model-primary',
      usage: { input: 100 + (n % 400), cachedInput: n % 11, cacheWrite: 0, output: 20 + (n % 300), reasoning: 0 },
      cost: { input: '0.000250000000', cachedInput: '0.000000000000', cacheWrite: '0.000000000000', output, total: (0.00025 + Number(output)).toFixed(12), currency: 'USD' },
    });
    const events = [{ eventId: uuidv7(), type: admitted.type, schemaVersion: admitted.schemaVersion, data: clone(admitted.data, {}), metadata }];
    if (n % 6 === 0) {
      events.push({
        eventId: uuidv7(), type: attempt.type, schemaVersion: attempt.schemaVersion, metadata,
        data: clone(attempt.data, {
          attempt: 1, outcome: 'failed', errorClass: 'upstream_5xx', httpStatus: 503, providerRequestId: null,
          usage: { input: 0, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 },
          cost: { input: '0.000000000000', cachedInput: '0.000000000000', cacheWrite: '0.000000000000', output: '0.000000000000', total: '0.000000000000', currency: 'USD' },
        }),
      });
    }
    events.push({ eventId: uuidv7(), type: attempt.type, schemaVersion: attempt.schemaVersion, data: success, metadata });
    events.push({ eventId: uuidv7(), type: completed.type, schemaVersion: completed.schemaVersion, data: clone(completed.data, { fallbackDepth: n % 6 === 0 ? 1 : 0 }), metadata });
    requests.push({ streamId: `request-${requestId}`, events, expectedVersion: 'no-stream' });
  }
  return requests;
}

/** `switchyard migrate` in a process of its own, killed with SIGKILL once it reports having copied some events. */
function migrateKilledMidCopy(args: string[], env: NodeJS.ProcessEnv): Promise<{ stderr: string; signal: NodeJS.Signals | null }> {
  const child = spawn(process.execPath, [MAIN, 'migrate', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let copying = false;
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
    if (!copying) copying = /Copying/.test(stderr);
    // A progress line after the copy began that counts more than nothing: at least one page is committed.
    if (copying && /\b[1-9][\d,]*\/[\d,]+ done/.test(stderr.slice(stderr.indexOf('Copying')))) child.kill('SIGKILL');
  });
  return new Promise((resolve) => child.once('exit', (_code, signal) => resolve({ stderr, signal })));
}

describeWithPostgres('switchyard migrate: the embedded store to PostgreSQL and back', () => {
  const root = mkdtempSync(join(tmpdir(), 'switchyard-migrate-'));
  const dataDir = join(root, 'data');
  const drops: Array<() => Promise<void>> = [];
  let source: StoreFacts;
  /** The source's global positions in the log's read order. */
  let sourceOrder: number[];
  let env: NodeJS.ProcessEnv;
  let target: string;

  beforeAll(async () => {
    process.env[KEY_ENV] = generateApiKey();
    process.env[AUDIT_KEY_ENV] = 'migrate-suite-audit-key-0123456789abcdef';
    await seedMigratedDataDir(dataDir);
    // A gateway on the embedded store serves real requests (the events every synthetic one is modelled on),
    // then the log grows to EVENTS (15,000) events through the store in large batches, as the group committer appends.
    const gw = await startTestGateway({
      databaseUrl: null, yaml,
      environment: { dataDir, audit: { signingKeyRef: `env:${AUDIT_KEY_ENV}`, checkpointIntervalMs: 0 } },
    });
    try {
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST', headers: { authorization: `Bearer ${process.env[KEY_ENV]}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: `hello ${i}` }] }),
        });
        expect(response.status).toBe(200);
      }
      const { store, database, runner, committer } = gw.gateway.platform;
      await committer.drain();
      const [first] = await database.query<{ stream_id: string }>(`SELECT stream_id FROM events WHERE event_type = 'RequestCompleted' ORDER BY global_position LIMIT 1`);
      const templates = await store.readStream(first.stream_id);
      let total = Number((await database.query<{ n: string }>(`SELECT count(*)::text AS n FROM events`))[0].n);
      for (let offset = 0; total < EVENTS; offset += 500) {
        const batch = syntheticRequests(templates, 500, offset);
        for (const result of await store.appendMany(batch)) if (result instanceof Error) throw result;
        total += batch.reduce((sum, request) => sum + request.events.length, 0);
      }
      await runner.catchUp(undefined, 120_000);
      source = await facts((sql) => database.query(sql));
      sourceOrder = (await database.query<{ p: string }>(`SELECT e.global_position::text AS p FROM events e ORDER BY e.transaction_id, e.global_position`)).map((row) => Number(row.p));
    } finally {
      await gw.close();
    }
    expect(source.log.n).toBeGreaterThanOrEqual(EVENTS);
    expect(source.head.sequence).toBe(source.log.n);
    expect(source.checkpoints).toBeGreaterThan(0);
    expect(source.adminTokens).toBe(1);
    expect(source.ledger.length).toBeGreaterThanOrEqual(TENANTS.length);
    env = { ...process.env, SWITCHYARD_DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' };
    const scratch = await createScratchDatabase(databaseUrl!);
    drops.push(scratch.drop);
    target = scratch.url;
  }, 240_000);

  afterAll(async () => {
    for (const drop of drops) await drop().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  // The refusals before anything is opened run in this process (cli-in-process.ts: the same code without a
  // process's seconds of start-up each); every migrate that opens the store is a process of its own.
  test('refuses a target that is not a PostgreSQL URL, or no target, and changes nothing', async () => {
    const none = await runCliInProcess(['migrate'], env);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('migrate needs --to postgres://… or --to-data-dir PATH');
    const both = await runCliInProcess(['migrate', '--to', target, '--to-data-dir', join(root, 'x')], env);
    expect(both.code).toBe(2);
    const mysql = await runCliInProcess(['migrate', '--to', 'mysql://root@127.0.0.1/test'], env);
    expect(mysql.code).toBe(2);
    expect(mysql.stderr).toContain('--to must be a PostgreSQL URL');
    expect(await sqlOn(target, `SELECT to_regclass('events') AS t`)).toEqual([{ t: null }]);
  }, 60_000);

  test('copies the 15,000-event log (three pages) into an empty database; chain, ledger and spend verify against the source', async () => {
    const result = await runCli(['migrate', '--to', target, '--json'], env);
    expect(result.stderr).not.toContain('MISMATCH');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ ok: true, resumed: false, events: source.log.n, copiedNow: source.log.n, adminTokens: 1, auditCheckpoints: source.checkpoints });
    expect(report.checks.map((c: { name: string; ok: boolean }) => [c.name, c.ok])).toEqual([
      ['events', true], ['last position (transaction:position)', true], ['audit chain head', true], ['audit verify (target)', true],
      ['cost ledger', true], ['tenant spend', true], ['admin tokens and signed checkpoints', true], ['control plane (routing snapshot, key index)', true],
    ]);
    expect(report.checks.at(-1).target).toMatch(/^providers 1, deployments 2, aliases 2, tenants 3, keys 1 \(1 active\), sha256 [0-9a-f]{64}$/);
    // The test's own comparison, from both databases: every event byte for byte, the chain head, the ledger
    // per tenant and day, tenant spend row by row, the copied admin token and signed checkpoints.
    expect(await factsOf(target)).toEqual(source);
    expect(await sqlOn(target, `SELECT to_regclass('switchyard_migration_in_progress') AS marker`)).toEqual([{ marker: null }]);
    expect(report.sourceMarkedMoved).toBe(true);
  }, 180_000);

  test('the moved embedded store refuses every command and server without DATABASE_URL, naming the target; deleting the mark reopens it', async () => {
    const mark = JSON.parse(readFileSync(join(dataDir, 'moved.json'), 'utf8'));
    expect(mark).toMatchObject({ to: expect.stringMatching(/^PostgreSQL postgres:\/\//), lastPosition: `${source.last.transaction_id}:${source.last.global_position}` });
    expect(new Date(mark.movedAt).getTime()).toBeGreaterThan(Date.now() - 600_000);
    // A revoke in a shell that lacks DATABASE_URL (the opened-platform path) and a read (the log reader's path) are
    // refused before the store is opened; were they not, the revoke would be one more event in the source's log,
    // which the next migrate below copies and compares with `source` byte for byte.
    const revoke = await runCliInProcess(['keys', 'revoke', 'acme-app', '--reason', 'wrong store'], env);
    expect(revoke.code).toBe(1);
    expect(revoke.stderr).toContain(`The embedded store in ${dataDir} was moved to PostgreSQL postgres://`);
    expect(revoke.stderr).toContain('Set DATABASE_URL to that database');
    expect(revoke.stderr).not.toContain('Revoked');
    const read = await runCliInProcess(['events', 'list', '--limit', '1'], env);
    expect(read.code).toBe(1);
    expect(read.stderr).toContain('was moved to PostgreSQL');
    const again = await runCliInProcess(['migrate', '--to', target], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('was moved to PostgreSQL');
    expect(again.stderr).toContain(`delete ${join(dataDir, 'moved.json')}`);
    // The way back the message gives: the store opens again (the suite's later migrations read it).
    rmSync(join(dataDir, 'moved.json'));
    const reopened = await runCliInProcess(['events', 'list', '--limit', '1'], env);
    expect(reopened.code).toBe(0);
  }, 60_000);

  test('refuses a target that is not empty, says what it found, and leaves it unchanged', async () => {
    const before = await factsOf(target);
    const result = await runCli(['migrate', '--to', target], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`is not empty: events: ${source.log.n.toLocaleString('en-US')} rows`);
    expect(result.stderr).toContain('nothing was changed');
    expect(await factsOf(target)).toEqual(before);
  }, 60_000);

  test('refuses while a server holds the embedded store', async () => {
    const { DataDirLock } = await import('../../src/kernel/database/data-dir-lock.js');
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    const lock = join(dataDir, 'switchyard.pid');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(lock, String(holder.pid));
    try {
      expect(DataDirLock.owner(dataDir)).toBe(holder.pid);
      // Refused on finding the lock's owner alive, before the store is opened: in this process.
      const result = await runCliInProcess(['migrate', '--to', target], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`is in use by process ${holder.pid}`);
      expect(result.stderr).toContain('Stop the server first');
    } finally {
      holder.kill('SIGKILL');
      rmSync(lock, { force: true });
    }
  }, 60_000);

  test('killed midway, it leaves a marked prefix that no server starts on; run again, it resumes and verifies', async () => {
    const scratch = await createScratchDatabase(databaseUrl!);
    drops.push(scratch.drop);
    const killed = await migrateKilledMidCopy(['--to', scratch.url], env);
    expect(killed.signal).toBe('SIGKILL');
    const [partial] = await sqlOn<{ n: number; marker: string | null }>(scratch.url,
      `SELECT (SELECT count(*)::int FROM events) AS n, to_regclass('switchyard_migration_in_progress')::text AS marker`);
    expect(partial.marker).toBe('switchyard_migration_in_progress');
    expect(partial.n).toBeGreaterThan(0);
    expect(partial.n).toBeLessThan(source.log.n);
    // The prefix is the source's log in its order: its first n events, no others.
    const prefix = await sqlOn<{ p: string }>(scratch.url, `SELECT e.global_position::text AS p FROM events e ORDER BY e.transaction_id, e.global_position`);
    expect(prefix.map((row) => Number(row.p))).toEqual(sourceOrder.slice(0, partial.n));
    const refused = await runCli(['events', 'list', '--limit', '1'], { ...env, DATABASE_URL: scratch.url });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('has not finished');
    const again = await runCli(['migrate', '--to', scratch.url, '--json'], env);
    expect(again.code).toBe(0);
    const report = JSON.parse(again.stdout);
    expect(report).toMatchObject({ ok: true, resumed: true, events: source.log.n, copiedNow: source.log.n - partial.n });
    expect(await factsOf(scratch.url)).toEqual(source);
  }, 180_000);

  test('the migrated store serves: a request through the mock provider is appended after the migrated log', async () => {
    const gw: TestGateway = await startTestGateway({ databaseUrl: target, yaml });
    try {
      const response = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${process.env[KEY_ENV]}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'after the move' }] }),
      });
      expect(response.status).toBe(200);
      const requestId = response.headers.get('x-request-id')!;
      await gw.gateway.platform.committer.drain();
      await gw.gateway.platform.runner.catchUp();
      const events = await gw.requestEvents(requestId);
      expect(events.map((e) => e.type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']);
      for (const event of events) {
        expect(event.transactionId).toBeGreaterThan(BigInt(source.last.transaction_id));
        expect(event.globalPosition).toBeGreaterThan(Number(source.last.global_position));
      }
      // In the log's read order the new request comes after every migrated event, and it reached the ledger and the chain.
      const [order] = await sqlOn<{ before: number }>(target,
        `SELECT count(*)::int AS before FROM events WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint) AND global_position <= $2::bigint`,
        [source.last.transaction_id, source.last.global_position]);
      expect(order.before).toBe(0);
      expect(await sqlOn(target, `SELECT count(*)::int AS n FROM cost_ledger WHERE request_id = $1`, [requestId])).toEqual([{ n: 1 }]);
      const [chained] = await sqlOn<{ n: number }>(target, `SELECT count(*)::int AS n FROM audit_chain c JOIN events e USING (event_id) WHERE e.stream_id = $1`, [`request-${requestId}`]);
      expect(chained.n).toBe(3);
    } finally {
      await gw.close();
    }
    const verified = await runCli(['audit', 'verify'], { ...env, DATABASE_URL: target });
    expect(verified.stdout).toContain('audit chain OK');
    expect(verified.code).toBe(0);
  }, 120_000);
});
