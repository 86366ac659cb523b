import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiKeyStream } from '../../events/api-key-events.js';
import type { AttemptFinished } from '../../events/request-events.js';
import { tenantStream } from '../../events/tenant-events.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { isBillable } from '../../projections/cost-ledger/cost-ledger.projection.js';
import type { Environment } from '../../src/config/environment.js';
import { type Gateway, startGateway } from '../../src/gateway.js';
import type { SqlExecutor } from '../../src/kernel/database/database.js';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { AdminClient } from '../support/admin-client.js';
import { runCli } from '../support/cli-process.js';
import { openStore } from '../support/event-store-targets.js';
import { defaultYaml } from '../support/gateway-harness.js';
import { type LoadResult, type RequestKind, sendRequest } from '../support/load.js';
import { OwnPostgres, ownPostgresAvailable } from '../support/own-postgres.js';
import { burnTransactionIdsUntil, nextTransactionId } from '../support/transaction-ids.js';
import { seedEmbeddedDataDir } from '../support/pglite-template.js';

/**
 * Issue 8's first acceptance scenario, as a user meets it: a fresh store, thousands of requests, so
 * that transaction ids pass a power of ten between a key's issue and its revocation (and a tenant's
 * creation and suspension); a restart must keep both refused, and `projections rebuild cost-ledger`
 * must reproduce the live ledger and tenant spend exactly. Reading the log in text order of
 * transaction ids broke all three.
 */

const ADMIN_TOKEN = 'boundaries-admin-token-0123456789abcdef';
const REQUESTS = 2_000;

interface Store {
  environment: Partial<Environment>;
  /** The environment a CLI process needs to reach the same store. */
  cliEnv: NodeJS.ProcessEnv;
  /** Runs a query on the store while no gateway is open (PGlite's directory admits one process). */
  withStore<T>(work: (executor: SqlExecutor) => Promise<T>): Promise<T>;
}

interface Money {
  ledger: Array<Record<string, unknown>>;
  spend: Array<Record<string, unknown>>;
}

async function money(executor: SqlExecutor): Promise<Money> {
  return {
    ledger: await executor.query(
      `SELECT request_id, attempt, tenant_id, key_id, deployment_id, input_tokens, output_tokens, cost_usd::text AS cost_usd,
              price_version, outcome, global_position::text AS global_position, recorded_at
       FROM cost_ledger ORDER BY request_id, attempt`,
    ),
    spend: await executor.query(`SELECT tenant_id, period, period_start, spent_usd::text AS spent_usd FROM tenant_spend ORDER BY 1, 2, 3`),
  };
}

async function xidsOf(executor: SqlExecutor, streamId: string): Promise<number[]> {
  const rows = await executor.query<{ xid: string }>(`SELECT transaction_id::text AS xid FROM events WHERE stream_id = $1 ORDER BY stream_version`, [streamId]);
  return rows.map((row) => Number(row.xid));
}

async function status(url: string, key: string): Promise<number> {
  return (await sendRequest(url, key, 'buffered')).status;
}

/** The scenario on one store; `boundaries` are the transaction ids the load must cross, in order. */
async function scenario(store: Store, boundaries: number[]): Promise<void> {
  const mock = new MockProviderServer();
  const mockUrl = await mock.listen(0);
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-boundaries-'));
  const configPath = join(dir, 'switchyard.yaml');
  const keyEnv = `SY_BOUNDARIES_${process.pid}_KEY`; // env: references may read *_KEY names (SWITCHYARD_SECRET_ENV)
  const acmeKey = generateApiKey();
  process.env[keyEnv] = acmeKey;
  process.env.SY_TEST_UPSTREAM_KEY = 'upstream-secret-value-123456';
  writeFileSync(configPath, defaultYaml(mockUrl, keyEnv));
  const environment: Environment = {
    port: 0, host: '127.0.0.1', configPath, dataDir: ':memory:', databaseUrl: null, redisUrl: null, clickhouseUrl: null,
    adminToken: ADMIN_TOKEN, durability: 'default', pollIntervalMs: 200, nodeId: 'boundaries', logLevel: 'error',
    ...store.environment,
  };
  let gateway: Gateway | null = null;
  try {
    gateway = await startGateway(environment, { port: 0 });
    const admin = new AdminClient(gateway.url, ADMIN_TOKEN);
    expect((await admin.post('/tenants', { id: 'globex' })).status).toBe(201);
    const globex = await admin.post('/keys', { id: 'globex-app', tenant: 'globex', scopes: ['inference'] });
    const doomed = await admin.post('/keys', { id: 'acme-doomed', tenant: 'acme', scopes: ['inference'] });
    expect([globex.status, doomed.status]).toEqual([201, 201]);
    const keys = { acme: acmeKey, globex: globex.json.key as string, doomed: doomed.json.key as string };

    // The load, in slices that each start just below the next boundary.
    const results: LoadResult[] = [];
    const database = gateway.platform.database;
    const perSlice = Math.ceil(REQUESTS / boundaries.length);
    for (const boundary of boundaries) {
      await burnTransactionIdsUntil(database, Math.max(boundary - 5, await nextTransactionId(database)));
      let sent = 0;
      // 32 clients keep group-commit batches full; one request in four streams.
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (sent < perSlice) {
            const i = sent++;
            const key = i % 10 < 7 ? keys.acme : i % 10 < 9 ? keys.globex : keys.doomed;
            const kind: RequestKind = i % 4 === 3 ? 'stream' : 'buffered';
            results.push(await sendRequest(gateway!.url, key, kind));
          }
        }),
      );
      expect(await nextTransactionId(database)).toBeGreaterThan(boundary);
    }
    expect(results).toHaveLength(perSlice * boundaries.length);
    expect(results.every((result) => result.complete)).toBe(true);

    // Revoke and suspend, now that transaction ids have more digits than at the issue and the creation.
    expect((await admin.post('/keys/acme-doomed/revoke', { reason: 'boundary test' })).status).toBe(200);
    expect((await admin.post('/tenants/globex/suspend', { reason: 'boundary test' })).status).toBe(200);
    // The premise: the later event's transaction id has more digits (so it sorts first as text).
    const [issuedAt, revokedAt] = await xidsOf(database, apiKeyStream('acme-doomed'));
    const [createdAt, suspendedAt] = await xidsOf(database, tenantStream('globex'));
    expect(String(issuedAt).length).toBeLessThan(String(revokedAt).length);
    expect(String(createdAt).length).toBeLessThan(String(suspendedAt).length);
    expect([await status(gateway.url, keys.doomed), await status(gateway.url, keys.globex), await status(gateway.url, keys.acme)]).toEqual([401, 403, 200]);

    // The live ledger: one row per billable attempt, every answered request billed once.
    await gateway.platform.committer.drain();
    await gateway.platform.runner.catchUp(['cost-ledger']);
    const attempts = (await database.query<{ data: AttemptFinished['data'] }>(`SELECT data FROM events WHERE event_type = 'AttemptFinished'`))
      .map((row) => row.data)
      .filter(isBillable);
    const live = await money(database);
    expect(live.ledger).toHaveLength(attempts.length);
    const billed = new Set(live.ledger.map((row) => row.request_id));
    expect(results.filter((result) => result.requestId && !billed.has(result.requestId))).toEqual([]);
    expect(new Set(live.spend.map((row) => row.tenant_id))).toEqual(new Set(['acme', 'globex']));
    await gateway.close();
    gateway = null;

    // Restart: both still refused, and the admin API says why.
    gateway = await startGateway(environment, { port: 0 });
    expect([await status(gateway.url, keys.doomed), await status(gateway.url, keys.globex), await status(gateway.url, keys.acme)]).toEqual([401, 403, 200]);
    const restartedAdmin = new AdminClient(gateway.url, ADMIN_TOKEN);
    expect((await restartedAdmin.get('/keys/acme-doomed')).json.status).toBe('revoked');
    expect((await restartedAdmin.get('/tenants/globex')).json.status).toBe('suspended');
    await gateway.platform.committer.drain();
    await gateway.platform.runner.catchUp(['cost-ledger']);
    // The three probes above were billed too; take the ledger as the restarted node left it.
    const beforeRebuild = await money(gateway.platform.database);
    expect(beforeRebuild.ledger.length).toBe(live.ledger.length + 1);
    await gateway.close();
    gateway = null;

    // Stopped: rebuild as a user would, from the CLI.
    const rebuilt = await runCli(['projections', 'rebuild', 'cost-ledger'], { ...store.cliEnv, LOG_LEVEL: 'error' });
    expect({ code: rebuilt.code, stderr: rebuilt.code === 0 ? '' : rebuilt.stderr }).toEqual({ code: 0, stderr: '' });
    const after = await store.withStore(money);
    expect(after.spend).toEqual(beforeRebuild.spend);
    expect(after.ledger).toEqual(beforeRebuild.ledger);
  } finally {
    await gateway?.close().catch(() => undefined);
    await mock.close();
    rmSync(dir, { recursive: true, force: true });
    delete process.env[keyEnv];
  }
}

describe('revocation, suspension and billing across transaction-id boundaries', () => {
  test(`embedded PGlite in a data directory: ${REQUESTS} requests across 999→1000 and 9999→10000, restart, CLI rebuild`, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-boundaries-data-'));
    try {
      await seedEmbeddedDataDir(dataDir);
      await scenario(
        {
          environment: { dataDir },
          cliEnv: { ...process.env, DATABASE_URL: '', SWITCHYARD_DATA_DIR: dataDir },
          withStore: async (work) => {
            const fixture = await openStore(null, dataDir);
            try {
              return await work(fixture.database);
            } finally {
              await fixture.close();
            }
          },
        },
        [1_000, 10_000],
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);

  (ownPostgresAvailable() ? test : test.skip)(`PostgreSQL (a server of its own): ${REQUESTS} requests across 999,999→1,000,000, restart, CLI rebuild`, async () => {
    const server = await OwnPostgres.create({ nextTransactionId: 999_000 });
    try {
      await scenario(
        {
          environment: { databaseUrl: server.url() },
          cliEnv: { ...process.env, DATABASE_URL: server.url() },
          withStore: async (work) => {
            const fixture = await openStore(server.url());
            try {
              return await work(fixture.database);
            } finally {
              await fixture.close();
            }
          },
        },
        [1_000_000],
      );
    } finally {
      await server.remove();
    }
  }, 300_000);
});
