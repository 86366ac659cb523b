import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { AdminClient, waitUntil } from '../support/admin-client.js';
import { analyticsYaml, mixedTraffic } from '../support/analytics-fixtures.js';
import { startServer } from '../support/cli-process.js';
import { type ScratchClickHouse, scratchClickHouse } from '../support/clickhouse.js';
import { createScratchDatabase, requireService } from '../support/services.js';

const databaseUrl = requireService('DATABASE_URL');
const clickhouseUrl = requireService('CLICKHOUSE_URL');
const describeWithServices = databaseUrl && clickhouseUrl ? describe : describe.skip;
const ADMIN_TOKEN = 'crash-suite-admin-token-0123456789';

describeWithServices('ClickHouse analytics: killed between the ClickHouse insert and the checkpoint, then restarted', () => {
  let db: { url: string; drop: () => Promise<void> };
  let ch: ScratchClickHouse;
  let mock: MockProviderServer;
  let client: pg.Client;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    db = await createScratchDatabase(databaseUrl!);
    ch = scratchClickHouse(clickhouseUrl!);
    mock = new MockProviderServer();
    const mockUrl = await mock.listen(0);
    mock.setDefaults({ chunkGapMs: 3 });
    mock.addScenario({ model: 'model-primary', behaviour: { failureRate: 0.3, status: 503 } });
    mock.addScenario({ model: 'model-shaky', behaviour: { errorAfterChunks: 2 } });
    const key = generateApiKey();
    const configPath = join(mkdtempSync(join(tmpdir(), 'switchyard-crash-')), 'switchyard.yaml');
    writeFileSync(configPath, analyticsYaml(mockUrl, 'CRASH_TEST_KEY'));
    env = {
      ...process.env, DATABASE_URL: db.url, CLICKHOUSE_URL: ch.url, SWITCHYARD_CONFIG: configPath, CRASH_TEST_KEY: key,
      // No Redis: its failing 'primary' would open that deployment's breaker for other suites' nodes too.
      REDIS_URL: '',
      SY_TEST_UPSTREAM_KEY: 'upstream-secret', ADMIN_TOKEN, LOG_LEVEL: 'warn', SWITCHYARD_POLL_MS: '200',
      SWITCHYARD_FAULT_INJECTION: '',
    };
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end().catch(() => undefined);
    await mock?.close();
    if (process.env.KEEP_SCRATCH) return void process.stderr.write(`kept ${db?.url} ${ch?.database}\n`);
    await db?.drop();
    await ch?.drop();
  });

  const attemptEvents = async () => Number((await client.query(`SELECT count(*) AS n FROM events WHERE event_type = 'AttemptFinished'`)).rows[0].n);
  const clickhouseRows = async () => Number((await ch.rows(`SELECT toString(count()) AS n FROM ${ch.database}.attempts`))[0]?.n ?? 0);
  const rollupAttempts = async (table: string) => Number((await ch.rows(`SELECT toString(sum(attempts)) AS n FROM ${ch.database}.${table}`))[0]?.n ?? 0);
  /** Raw rows and both rollups hold every attempt (a reader can see an insert's raw part before its view's part). */
  const caughtUp = async () => {
    const events = await attemptEvents();
    return (await clickhouseRows()) === events && (await rollupAttempts('spend_hourly')) === events && (await rollupAttempts('spend_daily')) === events;
  };

  test('the replayed batch is not counted twice: raw rows and rollups still equal the ledger exactly', async () => {
    // 1. A healthy server fills ClickHouse.
    let server = await startServer(env);
    try {
      await mixedTraffic(server.url, env.CRASH_TEST_KEY!, 10);
      await waitUntil(caughtUp, 30_000, 'ClickHouse to catch up');
    } finally {
      await server.stop();
    }
    const before = await clickhouseRows();

    // 2. The same server with the fault armed: it kills itself (SIGKILL) right after its next ClickHouse insert,
    //    before the projection's checkpoint commits in PostgreSQL.
    server = await startServer({ ...env, SWITCHYARD_FAULT_INJECTION: 'clickhouse-after-insert' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => server.child.once('exit', (_code, signal) => resolve(signal)));
    await mixedTraffic(server.url, env.CRASH_TEST_KEY!, 6).catch(() => undefined);
    expect(await exited).toBe('SIGKILL');

    // The crash landed in the window: ClickHouse holds rows beyond the checkpoint PostgreSQL kept.
    const { rows: [checkpoint] } = await client.query(
      `SELECT transaction_id::text AS tx, global_position::text AS pos FROM projection_checkpoints WHERE name = 'clickhouse-analytics'`,
    );
    const [beyond] = await ch.rows(`SELECT toString(count()) AS n FROM ${ch.database}.attempts
      WHERE transaction_id > ${checkpoint.tx} OR (transaction_id = ${checkpoint.tx} AND global_position > ${checkpoint.pos})`);
    expect(Number(beyond.n)).toBeGreaterThan(0);
    expect(await clickhouseRows()).toBeGreaterThan(before);

    // 3. Restart without the fault: the projection replays from its checkpoint into ClickHouse's high-water mark.
    server = await startServer(env);
    try {
      await mixedTraffic(server.url, env.CRASH_TEST_KEY!, 4);
      // Had the replay counted the killed batch again, these would overshoot and never settle on equality.
      await waitUntil(async () => (await clickhouseRows()) >= (await attemptEvents()), 30_000, 'ClickHouse to catch up after the restart');
      await waitUntil(caughtUp, 10_000, 'raw rows and rollups to equal the attempts exactly');
      const events = await attemptEvents();
      const [raw] = await ch.rows(`SELECT toString(count()) AS n, toString(uniqExact(request_id, attempt)) AS keys FROM ${ch.database}.attempts`);
      expect(Number(raw.n)).toBe(events);
      expect(Number(raw.keys)).toBe(events);
      // Totals per tenant, key and model: the rollups against the ledger, both granularities.
      const admin = new AdminClient(server.url, ADMIN_TOKEN);
      const { rows: [bounds] } = await client.query(`SELECT min(recorded_at) AS first FROM cost_ledger`);
      const from = new Date(`${new Date(bounds.first).toISOString().slice(0, 10)}T00:00:00Z`);
      const to = new Date(from.getTime() + 2 * 86_400_000).toISOString();
      // The ledger projection runs on its own schedule: wait until it has billed what ClickHouse holds.
      const [billable] = await ch.rows(`SELECT toString(count()) AS n FROM ${ch.database}.attempts WHERE billable = 1`);
      await waitUntil(async () => Number((await client.query(`SELECT count(*) AS n FROM cost_ledger`)).rows[0].n) === Number(billable.n),
        30_000, 'the ledger to bill every billable attempt');
      expect((await admin.get(`/analytics/spend?from=${from.toISOString()}&to=${to}`)).json.source).toBe('clickhouse');
      for (const granularity of ['hour', 'day']) {
        const query = `from=${from.toISOString()}&to=${to}&granularity=${granularity}&groupBy=tenant,key,model`;
        const [fromClickHouse, fromPostgres] = await Promise.all([admin.get(`/analytics/spend?${query}&source=clickhouse`), admin.get(`/analytics/spend?${query}&source=postgres`)]);
        expect(fromClickHouse.json.rows.length).toBeGreaterThan(0);
        expect(fromClickHouse.json.rows).toEqual(fromPostgres.json.rows);
        expect(fromClickHouse.json.totals).toEqual(fromPostgres.json.totals);
      }
      const { rows: [ledger] } = await client.query(`SELECT sum(cost_usd)::text AS cost FROM cost_ledger`);
      const [billed] = await ch.rows(`SELECT toString(sum(cost_usd)) AS cost FROM ${ch.database}.spend_daily`);
      expect(billed.cost).toBe(ledger.cost);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
