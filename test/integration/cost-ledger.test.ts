import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { isBillable } from '../../projections/cost-ledger/cost-ledger.projection.js';
import type { AttemptFinished } from '../../events/request-events.js';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { defaultYaml, startTestGateway, type TestGateway } from '../support/gateway-harness.js';
import { type LoadResult, type RequestKind, runLoad } from '../support/load.js';
import { createScratchDatabase, requireService } from '../support/services.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const baseUrl = requireService('DATABASE_URL');
const describeWithPostgres = baseUrl ? describe : describe.skip;

/** The default config plus an alias whose only deployment always fails mid-stream. */
function mixedYaml(mockUrl: string, keyEnv: string): string {
  return defaultYaml(mockUrl, keyEnv)
    .replace(
      'aliases:',
      `  - id: shaky
    provider: mock-upstream
    model: model-shaky
    capabilities: [chat, streaming]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "1.10", outputPer1M: "4.40" }
aliases:
  - name: shaky
    routes:
      - { deployment: shaky, priority: 0 }`,
    );
}

interface LedgerRow {
  request_id: string;
  attempt: number;
  cost_usd: string;
  input_tokens: string;
  output_tokens: string;
  [column: string]: unknown;
}

async function ledgerRows(client: pg.Client): Promise<LedgerRow[]> {
  return (await client.query(`SELECT * FROM cost_ledger ORDER BY request_id, attempt`)).rows;
}

async function spendRows(client: pg.Client) {
  return (await client.query(`SELECT tenant_id, period, period_start, spent_usd::text FROM tenant_spend ORDER BY 1, 2, 3`)).rows;
}

async function billableAttempts(client: pg.Client): Promise<Map<string, AttemptFinished['data']>> {
  const rows = (await client.query(`SELECT data FROM events WHERE event_type = 'AttemptFinished'`)).rows as Array<{ data: AttemptFinished['data'] }>;
  return new Map(rows.filter((r) => isBillable(r.data)).map((r) => [`${r.data.requestId}#${r.data.attempt}`, r.data]));
}

/** Ledger = billable attempts, one row each, same money; spend = ledger sum, exactly. */
async function expectLedgerMatchesEvents(client: pg.Client): Promise<void> {
  const attempts = await billableAttempts(client);
  const rows = await ledgerRows(client);
  expect(rows.length).toBe(attempts.size);
  for (const row of rows) {
    const attempt = attempts.get(`${row.request_id}#${row.attempt}`);
    expect(attempt).toBeDefined();
    expect(Number(row.cost_usd).toFixed(12)).toBe(attempt!.cost.total);
    // bigint columns: the driver reads them as decimal text.
    expect(Number(row.input_tokens)).toBe(attempt!.usage.input);
    expect(Number(row.output_tokens)).toBe(attempt!.usage.output);
  }
  const check = await client.query(`
    SELECT (SELECT coalesce(sum(cost_usd), 0) FROM cost_ledger)::text AS ledger,
           (SELECT coalesce(sum(spent_usd), 0) FROM tenant_spend WHERE period = 'month')::text AS month,
           (SELECT coalesce(sum(spent_usd), 0) FROM tenant_spend WHERE period = 'day')::text AS day`);
  expect(check.rows[0].month).toBe(check.rows[0].ledger);
  expect(check.rows[0].day).toBe(check.rows[0].ledger);
}

describeWithPostgres('cost ledger on PostgreSQL', () => {
  let scratch: { url: string; drop: () => Promise<void> };
  let client: pg.Client;
  beforeAll(async () => {
    scratch = await createScratchDatabase(baseUrl!);
    client = new pg.Client({ connectionString: scratch.url });
  });
  afterAll(async () => {
    await client.end().catch(() => undefined);
    await scratch.drop();
  });

  // 400 requests: the ten kinds below 40 times each, and with one primary attempt in five failing about 60
  // failovers, 40 disconnects and 40 streams cut after two chunks — every outcome the ledger must hold, many
  // times over. (1,000 showed the same at two and a half times the run time.)
  test('400 mixed requests: one ledger row per billable attempt, spend equals the ledger, rebuild reproduces it', async () => {
    const gw: TestGateway = await startTestGateway({ databaseUrl: scratch.url, yaml: mixedYaml });
    await client.connect();
    try {
      gw.mock.addScenario({ model: 'model-primary', behaviour: { failureRate: 0.2, status: 503 } });
      gw.mock.addScenario({ model: 'model-shaky', behaviour: { errorAfterChunks: 2 } });
      const kinds: Array<{ kind: RequestKind; model: string }> = [
        ...Array(4).fill({ kind: 'buffered', model: 'chat' }),
        ...Array(3).fill({ kind: 'stream', model: 'chat' }),
        { kind: 'disconnect', model: 'chat' },
        { kind: 'stream', model: 'shaky' },
        { kind: 'invalid', model: 'chat' },
      ];
      const results = await runLoad(gw.url, gw.key, 400, 32, (i) => kinds[i % kinds.length]);
      expect(results).toHaveLength(400);
      expect(results.filter((r) => r.kind === 'invalid').every((r) => r.status === 400)).toBe(true);
      expect(results.filter((r) => r.kind === 'buffered').every((r) => r.complete)).toBe(true);

      await gw.gateway.platform.committer.drain();
      await gw.gateway.platform.runner.catchUp(['cost-ledger']);
      await expectLedgerMatchesEvents(client);
      // Every complete answer's request has exactly one success row (one query for all of them).
      const complete = results.filter((r) => r.complete).map((r) => r.requestId);
      const billed = await client.query(
        `SELECT r.id AS "requestId", (SELECT count(*)::int FROM cost_ledger c WHERE c.request_id = r.id AND c.outcome = 'success') AS n
           FROM unnest($1::text[]) AS r(id) ORDER BY r.id COLLATE "C"`, [complete]);
      expect(billed.rows).toEqual([...complete].sort().map((requestId) => ({ requestId, n: 1 })));
      const outcomes = (await client.query(`SELECT outcome, count(*)::int AS n FROM cost_ledger GROUP BY outcome`)).rows;
      expect(outcomes.map((o) => o.outcome).sort()).toEqual(expect.arrayContaining(['success', 'failed_partial']));

      const ledgerBefore = await ledgerRows(client);
      const spendBefore = await spendRows(client);
      await gw.gateway.platform.runner.rebuild('cost-ledger');
      expect(await ledgerRows(client)).toEqual(ledgerBefore);
      expect(await spendRows(client)).toEqual(spendBefore);
    } finally {
      await gw.close();
    }
  }, 120_000);

  test('kill -9 during load, then restart: every answer delivered in full is billed once; the CLI rebuild reproduces the rows', async () => {
    const db = await createScratchDatabase(baseUrl!);
    const mock = new MockProviderServer();
    const mockUrl = await mock.listen(0);
    mock.setDefaults({ ttftMs: 10, chunkGapMs: 3, latencyMs: 5 });
    const key = generateApiKey();
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-kill-'));
    const configPath = join(dir, 'switchyard.yaml');
    writeFileSync(configPath, defaultYaml(mockUrl, 'KILL_TEST_KEY'));
    const port = await freePort();
    const env = {
      ...process.env, DATABASE_URL: db.url, SWITCHYARD_CONFIG: configPath, PORT: String(port), KILL_TEST_KEY: key,
      SY_TEST_UPSTREAM_KEY: 'upstream-secret', LOG_LEVEL: 'warn', SWITCHYARD_POLL_MS: '200',
    };
    const verify = new pg.Client({ connectionString: db.url });
    let server = await startServer(env, port);
    try {
      const results: LoadResult[] = [];
      let stop = false;
      const load = Promise.all(
        Array.from({ length: 16 }, async (_, worker) => {
          for (let i = 0; !stop; i++) {
            const kind: RequestKind = (worker + i) % 2 === 0 ? 'buffered' : 'stream';
            const { sendRequest } = await import('../support/load.js');
            results.push(await sendRequest(`http://127.0.0.1:${port}`, key, kind));
          }
        }),
      );
      // Killed once more than 50 answers were delivered in full (not after a fixed 2.5 s, which on a loaded
      // machine could come before 50): the load is still running, so the kill cuts requests off.
      for (const until = Date.now() + 30_000; results.filter((r) => r.complete).length <= 55 && Date.now() < until;) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      server.kill('SIGKILL');
      await new Promise((resolve) => server.once('exit', resolve));
      stop = true;
      await load;
      const delivered = results.filter((r) => r.complete);
      expect(delivered.length).toBeGreaterThan(50);
      expect(results.some((r) => !r.complete)).toBe(true); // the kill did cut requests off

      server = await startServer(env, port);
      await verify.connect();
      await waitForLedger(verify);
      for (const result of delivered) {
        const rows = await verify.query(
          `SELECT count(*)::int AS n FROM cost_ledger WHERE request_id = $1 AND outcome = 'success'`, [result.requestId],
        );
        expect({ requestId: result.requestId, billed: rows.rows[0].n }).toEqual({ requestId: result.requestId, billed: 1 });
      }
      await expectLedgerMatchesEvents(verify);

      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
      const before = await ledgerRows(verify);
      const spend = await spendRows(verify);
      const cli = await runCli(['projections', 'rebuild', 'cost-ledger'], env);
      expect(cli.code).toBe(0);
      expect(await ledgerRows(verify)).toEqual(before);
      expect(await spendRows(verify)).toEqual(spend);
    } finally {
      if (server.exitCode === null) server.kill('SIGKILL');
      await verify.end().catch(() => undefined);
      await mock.close();
      await db.drop();
    }
  }, 120_000);
});

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));

async function startServer(env: NodeJS.ProcessEnv, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [MAIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  for (let waited = 0; waited < 30_000; waited += 100) {
    if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (response.ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${output}`);
}

async function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  const child = spawn(process.execPath, [MAIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
  return { code, output };
}

async function waitForLedger(client: pg.Client): Promise<void> {
  for (let waited = 0; waited < 30_000; waited += 200) {
    const rows = await client.query(`
      SELECT (SELECT max(global_position) FROM events WHERE event_type = 'AttemptFinished') AS head,
             (SELECT max(global_position) FROM cost_ledger) AS ledger,
             (SELECT count(*) FROM events e WHERE event_type = 'AttemptFinished'
                AND NOT EXISTS (SELECT 1 FROM projection_checkpoints c WHERE c.name = 'cost-ledger'
                  AND (e.transaction_id, e.global_position) <= (c.transaction_id, c.global_position)))::int AS pending`);
    if (rows.rows[0].pending === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the ledger did not catch up');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}
