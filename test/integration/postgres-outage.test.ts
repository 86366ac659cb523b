import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { type ServerProcess, startServer } from '../support/cli-process.js';
import { defaultYaml } from '../support/gateway-harness.js';
import { type LoadResult, type RequestKind, sendRequest } from '../support/load.js';
import { OwnPostgres, ownPostgresAvailable } from '../support/own-postgres.js';
import { SPOOL_PORTS, freePortIn } from '../support/port-range.js';

/**
 * Issue 13 item 6, the acceptance test: a PostgreSQL server of the test's own is stopped for 20 s under
 * load. The gateway (a child process) keeps answering from its routing snapshot, spooling each
 * request's events to local disk before the answer's last byte; when the server returns, the spool
 * drains and every answered request is in the cost ledger exactly once.
 */

/** Gateway processes' ports (port-range.ts). */
const portInRange = (taken: number[] = []) => freePortIn(SPOOL_PORTS, taken);

async function within(ms: number, probe: () => Promise<boolean>, what: string): Promise<void> {
  const started = Date.now();
  while (!(await probe())) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The spool's segment files now; the drainer deletes them meanwhile, so one listed but gone by its stat is not counted. */
function segmentFiles(dir: string): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      const stat = statSync(full, { throwIfNoEntry: false });
      if (stat?.isDirectory()) walk(full);
      else if (stat && /^segment-\d+\.log$/.test(name)) found.push(full);
    }
  };
  walk(dir);
  return found;
}


interface OutageRig {
  server: OwnPostgres;
  gw: ServerProcess;
  key: string;
  adminToken: string;
  spoolDir: string;
  exits: Array<number | string | null>;
  close(): Promise<void>;
}

/** A PostgreSQL server of the test's own and a gateway process on it, with its spool in a directory of the test's. */
async function startRig(extraEnv: NodeJS.ProcessEnv = {}): Promise<OutageRig> {
  const pgPort = await portInRange();
  const server = await OwnPostgres.create({ port: pgPort });
  const mock = new MockProviderServer();
  const mockUrl = await mock.listen(0);
  mock.setDefaults({ ttftMs: 5, chunkGapMs: 2, latencyMs: 5 });
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-outage-'));
  const spoolDir = join(dir, 'spool');
  const key = generateApiKey();
  const adminToken = `outage-admin-${'x'.repeat(24)}`;
  writeFileSync(join(dir, 'switchyard.yaml'), defaultYaml(mockUrl, 'OUTAGE_TEST_KEY'));
  const env: NodeJS.ProcessEnv = {
    ...process.env, DATABASE_URL: server.url(), SWITCHYARD_CONFIG: join(dir, 'switchyard.yaml'), OUTAGE_TEST_KEY: key,
    SY_TEST_UPSTREAM_KEY: 'upstream-secret', LOG_LEVEL: 'warn', SWITCHYARD_POLL_MS: '250', ADMIN_TOKEN: adminToken,
    SWITCHYARD_DATA_DIR: join(dir, 'data'), SWITCHYARD_SPOOL_DIR: spoolDir, ...extraEnv,
  };
  let gw: ServerProcess;
  try {
    gw = await startServer(env, await portInRange([pgPort]));
  } catch (error) {
    await mock.close();
    await server.remove();
    throw error;
  }
  const exits: Array<number | string | null> = [];
  gw.child.on('exit', (code, signal) => exits.push(code ?? signal));
  return {
    server, gw, key, adminToken, spoolDir, exits,
    close: async () => {
      await gw.stop();
      await mock.close();
      await server.remove();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function ledgerCaughtUp(client: pg.Client): Promise<void> {
  await within(60_000, async () => {
    const { rows } = await client.query(`
      SELECT count(*)::int AS pending FROM events e WHERE e.event_type = 'AttemptFinished'
        AND NOT EXISTS (SELECT 1 FROM projection_checkpoints c WHERE c.name = 'cost-ledger'
          AND (e.transaction_id, e.global_position) <= (c.transaction_id, c.global_position))`);
    return rows[0].pending === 0;
  }, 'the cost ledger catching up');
}

const describeOwn = ownPostgresAvailable() ? describe : describe.skip;

describeOwn('PostgreSQL stopped under load (a server of its own)', () => {
  test('for 30 s: requests keep succeeding; control-plane changes get 503; after the drain every answered request is billed exactly once', async () => {
    const { server, gw, key, adminToken, spoolDir, exits, close } = await startRig();
    const results: Array<LoadResult & { during: boolean }> = [];
    let outage = false;
    let stop = false;
    try {
      const load = Promise.all(
        Array.from({ length: 6 }, async (_, worker) => {
          for (let i = 0; !stop; i++) {
            const kind: RequestKind = (worker + i) % 2 === 0 ? 'buffered' : 'stream';
            const during = outage;
            results.push({ ...(await sendRequest(gw.url, key, kind)), during });
            await new Promise((resolve) => setTimeout(resolve, 15));
          }
        }),
      );
      await within(10_000, async () => results.filter((r) => r.complete).length >= 50, 'answers before the outage');

      await server.stop(); // fast: every session of the gateway is terminated, new connections are refused
      outage = true;
      // The control plane needs the log itself: a clear 503 in the admin envelope, nothing changed.
      const refused = await fetch(`${gw.url}/admin/v1/tenants`, {
        method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'during-outage' }),
      });
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({ error: { code: 'event_store_unavailable', message: expect.stringMatching(/unreachable.*nothing was changed/) } });
      await within(15_000, async () => segmentFiles(spoolDir).length > 0, 'events reaching the spool');
      // A load balancer keeps the node: the outage is absorbed (DESIGN §7's promise is kept by the spool), and readiness says how.
      const ready = await fetch(`${gw.url}/readyz`);
      expect(ready.status).toBe(200);
      const readyBody = (await ready.json()) as any;
      expect(readyBody).toMatchObject({ status: 'ready', eventStore: { reachable: false, kind: 'postgres' } });
      expect(readyBody.checks.eventStore).toEqual({ status: 'failing', required: false, detail: 'not reachable; request events go to the outage spool' });
      expect(readyBody.problems.join('\n')).toMatch(/request events spooled locally/);
      await new Promise((resolve) => setTimeout(resolve, 30_000)); // the outage the acceptance names
      const duringCount = results.filter((r) => r.during).length;
      await server.start();
      outage = false;
      // Traffic goes on: the spool must still run empty (new requests commit directly once the backlog has been drained once).
      await within(30_000, async () => segmentFiles(spoolDir).length === 0, 'the spool draining under steady traffic');
      const answeredWhenDrained = results.length;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(results.length).toBeGreaterThan(answeredWhenDrained + 20);
      expect(segmentFiles(spoolDir)).toEqual([]); // and stays empty while the store answers
      stop = true;
      await load;
      expect(exits).toEqual([]);

      const during = results.filter((r) => r.during);
      expect(duringCount).toBeGreaterThan(100);
      // Requests kept succeeding: every one sent during the outage got its whole answer.
      expect(during.filter((r) => !r.complete)).toEqual([]);
      expect(results.filter((r) => !r.complete)).toEqual([]);

      await within(60_000, async () => segmentFiles(spoolDir).length === 0, 'the spool draining');
      const client = new pg.Client({ connectionString: server.url() });
      await client.connect();
      try {
        await ledgerCaughtUp(client);
        const answered = results.filter((r) => r.status === 200 && r.complete).map((r) => r.requestId!);
        const { rows } = await client.query<{ request_id: string; n: number }>(`SELECT request_id, count(*)::int AS n FROM cost_ledger GROUP BY request_id`);
        expect(rows.filter((row) => row.n !== 1)).toEqual([]);
        expect(rows.map((row) => row.request_id).sort()).toEqual([...answered].sort());
        // And in the log once each: RequestCompleted per answered request, no duplicate event ids.
        const completed = await client.query<{ n: number; streams: number }>(
          `SELECT count(*)::int AS n, count(DISTINCT stream_id)::int AS streams FROM events WHERE event_type = 'RequestCompleted'`);
        expect(completed.rows[0]).toEqual({ n: answered.length, streams: answered.length });
        // The control-plane change refused during the outage never happened.
        expect((await client.query(`SELECT 1 FROM events WHERE stream_id = 'tenant-during-outage'`)).rowCount).toBe(0);
      } finally {
        await client.end();
      }
      expect(gw.output()).toMatch(/outage spool/);
    } finally {
      stop = true;
      await close();
    }
  }, 180_000);

  test('a full spool (SWITCHYARD_SPOOL_MAX_BYTES): further answers are refused with 503 event_spool_full in the client\'s format, and never billed', async () => {
    const { server, gw, key, spoolDir, exits, close } = await startRig({ SWITCHYARD_SPOOL_MAX_BYTES: '6000' });
    try {
      expect((await sendRequest(gw.url, key, 'buffered')).complete).toBe(true);
      await server.stop();
      const spooled: LoadResult[] = [];
      let refusal: { status: number; body: any } | null = null;
      for (let i = 0; i < 40 && !refusal; i++) {
        const response = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
        });
        const body = await response.json();
        if (response.status === 200) spooled.push({ kind: 'buffered', requestId: response.headers.get('x-request-id'), status: 200, complete: true });
        else refusal = { status: response.status, body };
      }
      // The first answers fit (each request's events are ~2 KB of JSON); then the bound refuses.
      expect(spooled.length).toBeGreaterThan(0);
      expect(refusal).toEqual({
        status: 503,
        body: { error: { message: expect.stringMatching(/outage spool is full/), type: expect.any(String), param: null, code: 'event_spool_full' } },
      });
      const spooledBytes = segmentFiles(spoolDir).reduce((sum, path) => sum + statSync(path).size, 0);
      expect(spooledBytes).toBeLessThanOrEqual(6000);
      // A node that refuses every request is out of the load balancer, though its spool is short of the bound in bytes.
      const full = await fetch(`${gw.url}/readyz`);
      expect(full.status).toBe(503);
      const fullBody = (await full.json()) as any;
      expect(fullBody.checks.eventStore).toEqual({ status: 'failing', required: true, detail: 'not reachable; the outage spool is full' });
      expect(fullBody.problems).toContain('event store unreachable and the outage spool is full (6000 bytes): requests are refused');
      // Anthropic's envelope on /v1/messages; a stream ends in an error event, without its end marker.
      const messages = await fetch(`${gw.url}/v1/messages`, {
        method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'chat', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(messages.status).toBe(503);
      expect(await messages.json()).toEqual({ type: 'error', error: { type: expect.any(String), message: expect.stringMatching(/outage spool is full/) } });
      const stream = await sendRequest(gw.url, key, 'stream');
      expect(stream.complete).toBe(false);

      await server.start();
      await within(60_000, async () => segmentFiles(spoolDir).length === 0, 'the spool draining');
      await within(10_000, async () => (await fetch(`${gw.url}/readyz`)).status === 200, 'readiness once the spool has drained');
      const client = new pg.Client({ connectionString: server.url() });
      await client.connect();
      try {
        await ledgerCaughtUp(client);
        const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM cost_ledger`);
        expect(rows[0].n).toBe(1 + spooled.length); // the first request, and the spooled ones; never the refused
      } finally {
        await client.end();
      }
      expect((await sendRequest(gw.url, key, 'buffered')).complete).toBe(true);
      expect(exits).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);

  test('strict profile: RequestAdmitted and the rest are spooled as two appends and drain in order, each answered request billed once', async () => {
    const { server, gw, key, spoolDir, exits, close } = await startRig({ SWITCHYARD_DURABILITY: 'strict' });
    try {
      expect((await sendRequest(gw.url, key, 'buffered')).complete).toBe(true);
      await server.stop();
      const during: LoadResult[] = [];
      for (let i = 0; i < 12; i++) during.push(await sendRequest(gw.url, key, i % 2 ? 'stream' : 'buffered'));
      expect(during.filter((r) => !r.complete)).toEqual([]);
      expect(segmentFiles(spoolDir).length).toBeGreaterThan(0);
      await server.start();
      await within(60_000, async () => segmentFiles(spoolDir).length === 0, 'the spool draining');
      const client = new pg.Client({ connectionString: server.url() });
      await client.connect();
      try {
        await ledgerCaughtUp(client);
        const { rows } = await client.query<{ stream_id: string; versions: number[]; types: string[] }>(
          `SELECT stream_id, array_agg(stream_version ORDER BY stream_version) AS versions, array_agg(event_type ORDER BY stream_version) AS types
           FROM events WHERE stream_id = ANY($1::text[]) GROUP BY stream_id`, [during.map((r) => `request-${r.requestId}`)]);
        expect(rows).toHaveLength(during.length);
        for (const row of rows) expect([row.versions, row.types]).toEqual([[1, 2, 3], ['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']]);
        const ledger = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM cost_ledger`);
        expect(ledger.rows[0].n).toBe(1 + during.length);
      } finally {
        await client.end();
      }
      expect(exits).toEqual([]);
    } finally {
      await close();
    }
  }, 120_000);
});
