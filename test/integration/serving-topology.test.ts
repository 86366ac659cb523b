import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { type ServerProcess, runCli, startServer } from '../support/cli-process.js';
import { spawn } from 'node:child_process';
import { MAIN } from '../support/cli-process.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import { createScratchDatabase, requireService } from '../support/services.js';

const baseUrl = requireService('DATABASE_URL');
const describeWithPostgres = baseUrl ? describe : describe.skip;

function yaml(mockUrl: string): string {
  return `
providers:
  - { id: upstream, type: openai-compatible, baseUrl: "${mockUrl}/v1", allowPrivateNetwork: true }
deployments:
  - id: model-a
    provider: upstream
    model: model-a
    capabilities: [chat, streaming]
    price: { inputPer1M: "1.00", outputPer1M: "2.00" }
aliases:
  - { name: chat, routes: [{ deployment: model-a }] }
tenants:
  - { id: acme }
apiKeys:
  - { id: app, tenant: acme, key: env:TOPOLOGY_KEY, scopes: [inference] }
`;
}

async function chat(pool: Pool, key: string): Promise<number> {
  const response = await pool.request({
    path: '/v1/chat/completions', method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hello' }] }),
  });
  await response.body.text();
  return response.statusCode;
}

/** The environment of each child process of `pid`, from /proc. */
function childEnvironments(pid: number): Array<Map<string, string>> {
  const children = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).filter((entry) => {
    try {
      // The parent pid is the fourth field, after the command name in parentheses.
      return Number(readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]) === pid;
    } catch {
      return false; // exited meanwhile
    }
  });
  return children.map((child) => environment(Number(child)));
}

function environment(pid: number): Map<string, string> {
  const pairs = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return new Map(pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  for (let waited = 0; waited < timeoutMs; waited += 100) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/**
 * The serving topologies beyond one process: N cluster workers behind one port (the primary applies the
 * configuration once and runs the durable projections), and serving nodes whose durable projections run
 * in a `switchyard projector` of their own.
 */
describeWithPostgres('serving topologies on PostgreSQL', () => {
  let mock: MockProviderServer;
  let mockUrl: string;
  let scratch: { url: string; drop: () => Promise<void> };
  let db: pg.Client;
  let env: NodeJS.ProcessEnv;
  const key = generateApiKey();

  beforeEach(async () => {
    mock = new MockProviderServer();
    mockUrl = await mock.listen(0);
    scratch = await createScratchDatabase(baseUrl!);
    db = new pg.Client({ connectionString: scratch.url });
    await db.connect();
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-topology-'));
    writeFileSync(join(dir, 'switchyard.yaml'), yaml(mockUrl));
    env = {
      ...process.env, DATABASE_URL: scratch.url, SWITCHYARD_CONFIG: join(dir, 'switchyard.yaml'), SWITCHYARD_DATA_DIR: join(dir, 'data'),
      TOPOLOGY_KEY: key, ADMIN_TOKEN: 'topology-admin-token-0123456789', LOG_LEVEL: 'warn', SWITCHYARD_POLL_MS: '200',
    };
  });
  afterEach(async () => {
    await db.end();
    await scratch.drop();
    await mock.close();
  });

  const count = async (sql: string) => Number((await db.query(sql)).rows[0].n);

  test('SWITCHYARD_WORKERS=2: both workers serve one port, the configuration is applied once, every request is billed once', async () => {
    const { MALLOC_ARENA_MAX: _unset, MALLOC_MMAP_THRESHOLD_: _unsetToo, ...withoutArenas } = env;
    const server = await startServer({ ...withoutArenas, SWITCHYARD_WORKERS: '2', SWITCHYARD_NODE_ID: 'topology', LOG_LEVEL: 'log' });
    // The primary announces the node once every worker listens.
    expect(await waitFor(async () => server.output().includes('2 workers'), 20_000)).toBe(true);
    // Started without the serving environment, the primary still forks its workers with it.
    expect(environment(server.child.pid!).get('MALLOC_ARENA_MAX')).toBeUndefined();
    expect(environment(server.child.pid!).get('MALLOC_MMAP_THRESHOLD_')).toBeUndefined();
    const workers = childEnvironments(server.child.pid!).filter((vars) => vars.get('SWITCHYARD_NODE_ID')?.startsWith('topology/w'));
    expect(workers.map((vars) => vars.get('MALLOC_ARENA_MAX'))).toEqual(['2', '2']);
    expect(workers.map((vars) => vars.get('MALLOC_MMAP_THRESHOLD_'))).toEqual(['131072', '131072']);
    const pool = new Pool(server.url, { connections: 8 });
    try {
      const statuses = await Promise.all(Array.from({ length: 80 }, () => chat(pool, key)));
      expect(statuses.every((s) => s === 200)).toBe(true);
      const nodes = (await db.query(`SELECT DISTINCT metadata->>'nodeId' AS node FROM events WHERE event_type = 'RequestAdmitted' ORDER BY 1`)).rows.map((r) => r.node);
      expect(nodes).toEqual(['topology/w1', 'topology/w2']);
      // One application of the file, whatever the number of workers.
      expect(await count(`SELECT count(*) AS n FROM events WHERE event_type = 'ApiKeyIssued'`)).toBe(1);
      expect(await waitFor(async () => (await count(`SELECT count(*) AS n FROM cost_ledger`)) === 80, 10_000)).toBe(true);
      expect(await count(`SELECT count(DISTINCT (request_id, attempt)) AS n FROM cost_ledger`)).toBe(80);
      // /metrics sums the workers, whichever worker a scrape lands on: every scrape sees all 80 requests.
      const scrapes = await Promise.all(Array.from({ length: 8 }, async () => {
        const response = await pool.request({ path: '/metrics', method: 'GET', headers: { authorization: 'Bearer topology-admin-token-0123456789' } });
        return { status: response.statusCode, text: await response.body.text() };
      }));
      for (const scrape of scrapes) {
        expect(scrape.status).toBe(200);
        const served = [...scrape.text.matchAll(/^switchyard_requests_total\{operation="chat",alias="chat",status_class="2xx"\} (\d+)$/gm)].map((m) => Number(m[1]));
        expect(served).toEqual([80]);
      }
    } finally {
      await pool.close();
      await server.stop();
    }
    expect(server.child.exitCode ?? 0).toBe(0);
  });

  test('SWITCHYARD_PROJECTOR=external: the serving node writes no ledger rows; a switchyard projector process bills every request', async () => {
    const server: ServerProcess = await startServer({ ...env, SWITCHYARD_PROJECTOR: 'external' });
    const pool = new Pool(server.url, { connections: 4 });
    const ledger = () => count(`SELECT count(*) AS n FROM cost_ledger`);
    try {
      expect((await Promise.all(Array.from({ length: 20 }, () => chat(pool, key)))).every((s) => s === 200)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(await ledger()).toBe(0);
      const projector = spawn(process.execPath, [MAIN, 'projector'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      try {
        expect(await waitFor(async () => (await ledger()) === 20, 15_000)).toBe(true);
      } finally {
        const exited = new Promise((resolve) => projector.once('exit', resolve));
        projector.kill('SIGTERM');
        expect(await exited).toBe(0);
      }
      // With the projector gone, requests are still served; they are billed when a projector runs again.
      expect((await Promise.all(Array.from({ length: 5 }, () => chat(pool, key)))).every((s) => s === 200)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await ledger()).toBe(20);
    } finally {
      await pool.close();
      await server.stop();
    }
  });

  test('settings that cannot work are refused at start with a clear message', async () => {
    const noDatabase = { ...env, DATABASE_URL: '' };
    // The first refusal as a process of its own; meanwhile the other three in this process (cli-in-process.ts:
    // the same code, refusing before anything starts, without a process's seconds of start-up each).
    const [workers, external, projector, bad] = await Promise.all([
      runCli(['serve'], { ...noDatabase, SWITCHYARD_WORKERS: '2' }),
      runCliInProcess(['serve'], { ...noDatabase, SWITCHYARD_PROJECTOR: 'external' }),
      runCliInProcess(['projector'], noDatabase),
      runCliInProcess(['serve'], { ...env, SWITCHYARD_WORKERS: 'many' }),
    ]);
    expect(workers.code).toBe(1);
    expect(workers.stderr).toContain('SWITCHYARD_WORKERS above 1 needs DATABASE_URL');
    expect(external.stderr).toContain('SWITCHYARD_PROJECTOR=external needs DATABASE_URL');
    expect(projector.code).toBe(1);
    expect(projector.stderr).toContain('needs DATABASE_URL');
    expect(bad.stderr).toContain('SWITCHYARD_WORKERS');
    // A configured admin token too short to be accepted: said in one line, before a data directory is made.
    const fresh = join(mkdtempSync(join(tmpdir(), 'switchyard-short-token-')), 'data');
    const short = await runCliInProcess(['serve'], { ...noDatabase, SWITCHYARD_DATA_DIR: fresh, ADMIN_TOKEN: 'short' });
    expect(short.code).toBe(1);
    expect(short.stderr.trim()).toBe('ADMIN_TOKEN must be at least 16 characters');
    expect(existsSync(fresh)).toBe(false);
  });
});
