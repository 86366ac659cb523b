import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { isBillable } from '../../projections/cost-ledger/cost-ledger.projection.js';
import type { AttemptFinished } from '../../events/request-events.js';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { type ServerProcess, runCli, startServer } from '../support/cli-process.js';
import { defaultYaml } from '../support/gateway-harness.js';
import { type LoadResult, type RequestKind, sendRequest } from '../support/load.js';
import { OwnPostgres, ownPostgresAvailable } from '../support/own-postgres.js';
import { createScratchDatabase, requireService } from '../support/services.js';
import { isConnectionLoss } from '../../src/kernel/database/connection-loss.js';
import { PostgresDatabase } from '../../src/kernel/database/postgres-database.js';
import { startTestGateway } from '../support/gateway-harness.js';

/**
 * Database faults under load (issue 8): the gateway runs as a child process, so a crash is an exit we
 * see. Backends are terminated the way an operator or a failover would (pg_terminate_backend), and a
 * server of the test's own is stopped and started again.
 */

interface GatewayUnderTest {
  server: ServerProcess;
  key: string;
  env: NodeJS.ProcessEnv;
  mock: MockProviderServer;
  exits: Array<number | string | null>;
  /** Stops the gateway and the mock and removes the configuration directory. */
  close(): Promise<void>;
}

async function startGatewayProcess(databaseUrl: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<GatewayUnderTest> {
  const mock = new MockProviderServer();
  const mockUrl = await mock.listen(0);
  mock.setDefaults({ ttftMs: 5, chunkGapMs: 2, latencyMs: 5 });
  const key = generateApiKey();
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-faults-'));
  const configPath = join(dir, 'switchyard.yaml');
  writeFileSync(configPath, defaultYaml(mockUrl, 'FAULTS_TEST_KEY'));
  const env: NodeJS.ProcessEnv = {
    ...process.env, DATABASE_URL: databaseUrl, SWITCHYARD_CONFIG: configPath, FAULTS_TEST_KEY: key,
    SY_TEST_UPSTREAM_KEY: 'upstream-secret', LOG_LEVEL: 'warn', SWITCHYARD_POLL_MS: '250', ...extraEnv,
  };
  const server = await startServer(env);
  const exits: GatewayUnderTest['exits'] = [];
  server.child.on('exit', (code, signal) => exits.push(code ?? signal));
  return {
    server, key, env, mock, exits,
    close: async () => {
      await server.stop();
      await mock.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls until `probe` holds; returns how long it took. */
async function within(ms: number, probe: () => Promise<boolean>, what: string): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function readiness(url: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}/readyz`);
  return { status: response.status, body: await response.json() };
}

/** Waits until the ledger's checkpoint covers every AttemptFinished in the log. */
async function ledgerCaughtUp(client: pg.Client): Promise<void> {
  await within(30_000, async () => {
    const rows = await client.query(`
      SELECT count(*)::int AS pending FROM events e WHERE e.event_type = 'AttemptFinished'
        AND NOT EXISTS (SELECT 1 FROM projection_checkpoints c WHERE c.name = 'cost-ledger'
          AND (e.transaction_id, e.global_position) <= (c.transaction_id, c.global_position))`);
    return rows.rows[0].pending === 0;
  }, 'the cost ledger catching up');
}

const baseUrl = requireService('DATABASE_URL');
const describeWithPostgres = baseUrl ? describe : describe.skip;

describeWithPostgres('terminating the gateway\'s PostgreSQL backends under load', () => {
  test('16 concurrent requests, backends terminated three times: the process lives, serves again within seconds, every answered request is billed once', async () => {
    const db = await createScratchDatabase(baseUrl!);
    const gw = await startGatewayProcess(db.url);
    const admin = new pg.Client({ connectionString: db.url });
    admin.on('error', () => undefined);
    await admin.connect();
    const results: LoadResult[] = [];
    let stop = false;
    try {
      const load = Promise.all(
        Array.from({ length: 16 }, async (_, worker) => {
          for (let i = 0; !stop; i++) {
            const kind: RequestKind = (worker + i) % 2 === 0 ? 'buffered' : 'stream';
            results.push(await sendRequest(gw.server.url, gw.key, kind));
          }
        }),
      );
      const recoveries: number[] = [];
      for (let round = 0; round < 3; round++) {
        await new Promise((resolve) => setTimeout(resolve, 1_200));
        const answeredBefore = results.filter((r) => r.complete).length;
        const terminated = await admin.query(
          `SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()) AS t`,
        );
        expect(terminated.rows[0].n).toBeGreaterThanOrEqual(3); // pool, LISTEN, lease and TypeORM sessions at least
        // Serves again: new answers arrive from the load itself, and a fresh request succeeds.
        recoveries.push(
          await within(10_000, async () => {
            if (gw.exits.length) throw new Error(`the gateway exited (${gw.exits[0]}):\n${gw.server.output().slice(-1500)}`);
            return results.filter((r) => r.complete).length > answeredBefore + 16;
          }, 'answers after the termination'),
        );
        const fresh = await sendRequest(gw.server.url, gw.key, 'buffered');
        results.push(fresh);
        expect(fresh.complete).toBe(true);
        expect(gw.exits).toEqual([]);
      }
      stop = true;
      await load;
      expect(gw.exits).toEqual([]);
      expect(gw.server.output()).not.toMatch(/Emitted 'error' event|Unhandled|uncaught/i);

      const answered = results.filter((r) => r.complete);
      expect(answered.length).toBeGreaterThan(100);
      await ledgerCaughtUp(admin);
      const attempts = (await admin.query(`SELECT data FROM events WHERE event_type = 'AttemptFinished'`)).rows.map(
        (row) => row.data as AttemptFinished['data'],
      );
      const answeredIds = new Set(answered.map((r) => r.requestId));
      const billableOfAnswered = attempts.filter((a) => answeredIds.has(a.requestId) && isBillable(a));
      // Every answered request once in the log (no duplicate commit from a retried batch) …
      expect(new Set(billableOfAnswered.map((a) => a.requestId)).size).toBe(answeredIds.size);
      expect(billableOfAnswered).toHaveLength(answeredIds.size);
      // … and once in the ledger: the same rows and the same money, nothing more.
      const ledger = await admin.query(`SELECT request_id, count(*)::int AS n, sum(cost_usd)::text AS cost FROM cost_ledger GROUP BY request_id`);
      const billed = new Map(ledger.rows.map((row) => [row.request_id as string, row]));
      for (const id of answeredIds) expect({ id, rows: billed.get(id!)?.n ?? 0 }).toEqual({ id, rows: 1 });
      const unanswered = [...billed.keys()].filter((id) => !answeredIds.has(id));
      expect(unanswered).toEqual([]);
      const sums = await admin.query(
        `SELECT (SELECT sum(cost_usd) FROM cost_ledger)::text AS ledger,
                (SELECT sum((data->'cost'->>'total')::numeric) FROM events WHERE event_type = 'AttemptFinished' AND data->>'requestId' = ANY($1::text[]))::text AS answered`,
        [[...answeredIds]],
      );
      expect(sums.rows[0].ledger).toBe(sums.rows[0].answered);
      expect(recoveries.every((ms) => ms < 10_000)).toBe(true);
      expect((await readiness(gw.server.url)).status).toBe(200);
    } finally {
      stop = true;
      await gw.close();
      await admin.end().catch(() => undefined);
      await db.drop();
    }
  }, 120_000);
});

describeWithPostgres('a PostgreSQL backend terminated inside a transaction', () => {
  test('fails only that transaction, with a connection-loss error; the pool and the next transaction are fine', async () => {
    const db = await createScratchDatabase(baseUrl!);
    const database = new PostgresDatabase(db.url, 4);
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      let failure: unknown = null;
      await database
        .transaction(async (tx) => {
          const [{ pid }] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          await admin.query('SELECT pg_terminate_backend($1)', [pid]);
          // The server's FATAL arrives while the client is checked out and idle between statements.
          await new Promise((resolve) => setTimeout(resolve, 200));
          await tx.query('SELECT 1');
        })
        .catch((error: unknown) => (failure = error));
      expect(isConnectionLoss(failure)).toBe(true);
      expect(await database.query<{ ok: number }>('SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
      expect(await database.transaction((tx) => tx.query<{ ok: number }>('SELECT 2 AS ok'))).toEqual([{ ok: 2 }]);
      expect(await database.checkHealth(1_000)).toEqual({ reachable: true, problems: [] });
    } finally {
      await database.close();
      await admin.end();
      await db.drop();
    }
  });
});

const describeOwn = ownPostgresAvailable() ? describe : describe.skip;

describeOwn('the event store stopping and starting again (a server of its own)', () => {
  test('/readyz names the failing part and recovers by itself; LISTEN reconnects and the projections catch up', async () => {
    const server = await OwnPostgres.create();
    // A long poll interval: after the restart, only the reconnected LISTEN session can wake the key index quickly.
    // No outage spool (SWITCHYARD_SPOOL_MAX_BYTES=0): a request whose events cannot be committed is refused.
    const gw = await startGatewayProcess(server.url(), { SWITCHYARD_POLL_MS: '60000', SWITCHYARD_SPOOL_MAX_BYTES: '0' });
    try {
      expect(await readiness(gw.server.url)).toMatchObject({ status: 200, body: { status: 'ready', problems: [] } });

      await server.stop(); // fast shutdown: every session of the gateway is terminated
      await within(10_000, async () => (await readiness(gw.server.url)).status === 503, 'readiness reporting the outage');
      const down = await readiness(gw.server.url);
      expect(down.body).toMatchObject({ status: 'unavailable', eventStore: { reachable: false, kind: 'postgres' } });
      expect(down.body.problems.join('\n')).toMatch(/^queries: /m);
      // Public output: no address of the database.
      expect(JSON.stringify(down.body)).not.toMatch(new RegExp(`127\\.0\\.0\\.1|postgres://|${server.port}`));
      // A request cannot be committed, so it is not answered as if it had been — and nothing crashes.
      const during = await sendRequest(gw.server.url, gw.key, 'buffered');
      expect(during.complete).toBe(false);
      expect(during.status).toBe(503);
      expect(gw.exits).toEqual([]);

      await server.start();
      const recovered = await within(15_000, async () => {
        const ready = await readiness(gw.server.url);
        return ready.status === 200 && ready.body.problems.length === 0;
      }, 'readiness recovering');
      expect(recovered).toBeLessThan(15_000);
      expect((await sendRequest(gw.server.url, gw.key, 'buffered')).complete).toBe(true);

      // Another process revokes the key; only a notification (polling is 60 s here) can tell the gateway soon.
      const revoked = await runCli(['keys', 'revoke', 'acme-app'], { ...gw.env, LOG_LEVEL: 'error' });
      expect(revoked.code).toBe(0);
      await within(5_000, async () => (await sendRequest(gw.server.url, gw.key, 'buffered')).status === 401, 'the revocation reaching the gateway');
      expect(gw.exits).toEqual([]);
    } finally {
      await gw.close();
      await server.remove();
    }
  }, 120_000);
});

describe('the embedded store failing under load (PGlite)', () => {
  test('requests in flight are refused, not answered; readiness says why; no promise is left rejected unhandled', async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    const gw = await startTestGateway({ databaseUrl: null, environment: { pollIntervalMs: 100 } });
    try {
      let answered = 0;
      const load = Promise.all(
        Array.from({ length: 8 }, async (_, worker) => {
          const out: LoadResult[] = [];
          for (let i = 0; i < 40; i++) {
            const result = await sendRequest(gw.url, gw.key, (worker + i) % 2 ? 'stream' : 'buffered');
            if (result.complete) answered++;
            out.push(result);
          }
          return out;
        }),
      );
      // Under load, not after a fixed time: some answers are in, most requests are still to come.
      while (answered < 8) await new Promise((resolve) => setTimeout(resolve, 10));
      // The engine stops under the gateway (as when its WASM instance aborts): every statement fails from now on.
      await (gw.gateway.platform.database as unknown as { pg: { close(): Promise<void> } }).pg.close();
      const results = (await load).flat();
      expect(results.some((r) => r.complete)).toBe(true);
      const after = results.filter((r) => !r.complete);
      expect(after.length).toBeGreaterThan(0);
      // Nothing that could not be committed was delivered as an answer (buffered: 503; streams: an error event, no [DONE]).
      expect(after.every((r) => r.status === 503 || (r.kind === 'stream' && r.status === 200))).toBe(true);
      const ready = await readiness(gw.url);
      expect(ready).toMatchObject({ status: 503, body: { status: 'unavailable', eventStore: { reachable: false, kind: 'pglite' } } });
      expect(ready.body.problems).toContain('queries: PGlite is closed');
      await new Promise((resolve) => setTimeout(resolve, 500)); // let the projections' polls fail too
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
      await gw.gateway.app.close().catch(() => undefined);
      await gw.mock.close();
    }
  }, 60_000);
});
