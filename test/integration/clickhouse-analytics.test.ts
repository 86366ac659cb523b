import { Decimal } from 'decimal.js';
import { AdminClient } from '../support/admin-client.js';
import { runCli } from '../support/cli-process.js';
import { csvObjects } from '../support/csv.js';
import { ANALYTICS_KEYS, analyticsYaml, mixedTraffic } from '../support/analytics-fixtures.js';
import { type ScratchClickHouse, scratchClickHouse } from '../support/clickhouse.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { docsSqlBlocks } from '../support/docs-snippets.js';
import { requireService } from '../support/services.js';

const clickhouseUrl = requireService('CLICKHOUSE_URL');
const describeWithClickHouse = clickhouseUrl ? describe : describe.skip;
const ADMIN_TOKEN = 'analytics-suite-admin-token-0123';
const HOUR = 3_600_000;
const DAY = 86_400_000;

describeWithClickHouse('ClickHouse analytics against a real server: totals equal the PostgreSQL ledger to the cent', () => {
  let gw: TestGateway;
  let ch: ScratchClickHouse;
  let admin: AdminClient;
  let range: { hour: { from: string; to: string }; day: { from: string; to: string } };

  const ledger = <Row>(sql: string, params: unknown[] = []) => gw.gateway.platform.database.query<Row>(sql, params);
  const settle = async () => {
    await gw.gateway.platform.committer.drain();
    await gw.gateway.platform.runner.catchUp(['cost-ledger', 'clickhouse-analytics']);
  };
  const spend = (query: string) => admin.get(`/analytics/spend?${query}`);

  beforeAll(async () => {
    ch = scratchClickHouse(clickhouseUrl!);
    gw = await startTestGateway({ yaml: analyticsYaml, environment: { adminToken: ADMIN_TOKEN, clickhouseUrl: ch.url } });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
    gw.mock.setDefaults({ cachedTokens: 2, chunkGapMs: 5 });
    gw.mock.addScenario({ model: 'model-primary', behaviour: { failureRate: 0.3, status: 503 } });
    gw.mock.addScenario({ model: 'model-shaky', behaviour: { errorAfterChunks: 2 } });
    await mixedTraffic(gw.url, gw.key, 48);
    await settle();
    const [bounds] = await ledger<{ first: Date; last: Date }>(`SELECT min(recorded_at) AS first, max(recorded_at) AS last FROM cost_ledger`);
    const floor = (at: Date, step: number) => Math.floor(new Date(at).getTime() / step) * step;
    const iso = (ms: number) => new Date(ms).toISOString();
    range = {
      hour: { from: iso(floor(bounds.first, HOUR)), to: iso(floor(bounds.last, HOUR) + HOUR) },
      day: { from: iso(floor(bounds.first, DAY)), to: iso(floor(bounds.last, DAY) + DAY) },
    };
  }, 120_000);

  afterAll(async () => {
    await gw?.close();
    await ch?.drop();
  });

  test('the run mixed buffered, streamed, failed-over, failed-mid-stream and cancelled attempts from three keys of two tenants', async () => {
    const outcomes = await ledger<{ outcome: string; n: number }>(`SELECT outcome, count(*)::int AS n FROM cost_ledger GROUP BY outcome`);
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(expect.arrayContaining(['cancelled', 'failed_partial', 'success']));
    const failovers = await ledger<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT data->>'requestId' FROM events WHERE event_type = 'AttemptFinished'
       GROUP BY 1 HAVING count(DISTINCT data->>'deploymentId') > 1) f`,
    );
    expect(failovers[0].n).toBeGreaterThan(0);
    const keys = await ledger<{ key_id: string }>(`SELECT DISTINCT key_id FROM cost_ledger ORDER BY 1`);
    expect(keys.map((k) => k.key_id)).toEqual(Object.values(ANALYTICS_KEYS).sort());
    const cached = await ledger<{ n: string }>(`SELECT sum(cached_input_tokens)::text AS n FROM cost_ledger`);
    expect(Number(cached[0].n)).toBeGreaterThan(0);
  });

  test('raw attempts: one row per AttemptFinished, none twice, billable ones equal to the ledger row for row', async () => {
    const [{ events }] = await ledger<{ events: number }>(`SELECT count(*)::int AS events FROM events WHERE event_type = 'AttemptFinished'`);
    const [raw] = await ch.rows(`SELECT toString(count()) AS n, toString(uniqExact(request_id, attempt)) AS keys FROM ${ch.database}.attempts`);
    expect(Number(raw.n)).toBe(events);
    expect(Number(raw.keys)).toBe(events);
    // Token counts are bigint in the ledger and UInt64 in ClickHouse: decimal text on both sides.
    const ledgerRows = await ledger<{ request_id: string; attempt: number; cost_usd: string; input_tokens: string; output_tokens: string }>(
      `SELECT request_id, attempt, cost_usd::text AS cost_usd, input_tokens, output_tokens FROM cost_ledger ORDER BY request_id, attempt`,
    );
    const chRows = await ch.rows<{ request_id: string; attempt: number; cost_usd: string; input_tokens: string; output_tokens: string }>(
      `SELECT request_id, attempt, toString(cost_usd) AS cost_usd, input_tokens, output_tokens FROM ${ch.database}.attempts
       WHERE billable = 1 ORDER BY request_id, attempt`,
    );
    expect(chRows).toEqual(ledgerRows);
  });

  for (const granularity of ['hour', 'day'] as const) {
    test(`${granularity}: per tenant, key and model, ClickHouse answers exactly what the ledger answers`, async () => {
      const query = `from=${range[granularity].from}&to=${range[granularity].to}&granularity=${granularity}&groupBy=tenant,key,model`;
      const fromClickHouse = await spend(`${query}&source=clickhouse`);
      const fromPostgres = await spend(`${query}&source=postgres`);
      expect(fromClickHouse.status).toBe(200);
      expect(fromPostgres.status).toBe(200);
      expect(fromClickHouse.json.source).toBe('clickhouse');
      expect(fromPostgres.json.source).toBe('postgres');
      expect(fromClickHouse.headers.get('x-switchyard-analytics-source')).toBe('clickhouse');
      expect(fromClickHouse.json.rows.length).toBeGreaterThanOrEqual(6);
      expect(fromClickHouse.json.rows).toEqual(fromPostgres.json.rows);
      expect(fromClickHouse.json.totals).toEqual(fromPostgres.json.totals);
      // …and both equal the ledger summed directly, to the last of its 12 decimals.
      const [direct] = await ledger<{ cost: string; attempts: number }>(`SELECT sum(cost_usd)::text AS cost, count(*)::int AS attempts FROM cost_ledger`);
      expect(fromClickHouse.json.totals.costUsd).toBe(direct.cost);
      expect(fromClickHouse.json.totals.attempts).toBe(direct.attempts);
      const perGroup = await ledger<{ tenant_id: string; key_id: string; model: string; cost: string }>(
        `SELECT tenant_id, key_id, model, sum(cost_usd)::text AS cost FROM cost_ledger GROUP BY 1, 2, 3`,
      );
      for (const group of perGroup) {
        const rows = fromClickHouse.json.rows.filter((r: any) => r.tenant === group.tenant_id && r.key === group.key_id && r.model === group.model);
        const total = rows.reduce((sum: bigint, r: any) => sum + BigInt(r.costUsd.replace('.', '')), 0n);
        expect(total).toBe(BigInt(group.cost.replace('.', '')));
      }
      // The same answer as CSV, byte for byte.
      const csvClickHouse = await spend(`${query}&source=clickhouse&format=csv`);
      const csvPostgres = await spend(`${query}&source=postgres&format=csv`);
      expect(csvClickHouse.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(csvClickHouse.text).toBe(csvPostgres.text);
      expect(csvClickHouse.text.split('\r\n')[0]).toBe('period,tenant,key,model,requests,attempts,input_tokens,cached_input_tokens,cache_write_tokens,output_tokens,reasoning_tokens,cost_usd,cache_hits,saved_usd');
    });
  }

  test('week, month and the default range (the current month so far): ClickHouse answers exactly what the ledger answers', async () => {
    const first = new Date(range.day.from);
    const monday = new Date(first.getTime() - ((first.getUTCDay() + 6) % 7) * DAY);
    const last = new Date(Date.parse(range.day.to) - DAY);
    const weeks = { from: monday.toISOString(), to: new Date(monday.getTime() + (Math.floor((last.getTime() - monday.getTime()) / (7 * DAY)) + 1) * 7 * DAY).toISOString() };
    const months = { from: new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), 1)).toISOString(), to: new Date(Date.UTC(last.getUTCFullYear(), last.getUTCMonth() + 1, 1)).toISOString() };
    const [direct] = await ledger<{ cost: string; attempts: number }>(`SELECT sum(cost_usd)::text AS cost, count(*)::int AS attempts FROM cost_ledger`);
    for (const query of [
      `from=${weeks.from}&to=${weeks.to}&granularity=week&groupBy=tenant,key,model`,
      `from=${months.from}&to=${months.to}&granularity=month&groupBy=tenant,alias,model`,
      'granularity=week&groupBy=tenant,model',
      'granularity=month&groupBy=model',
      'granularity=hour&groupBy=tenant',
    ]) {
      const [a, b] = await Promise.all([spend(`${query}&source=clickhouse`), spend(`${query}&source=postgres`)]);
      expect([query, a.status, b.status]).toEqual([query, 200, 200]);
      expect(a.json.rows.length).toBeGreaterThan(0);
      expect(a.json.rows).toEqual(b.json.rows);
      expect(a.json.totals).toEqual(b.json.totals);
      expect([a.json.from, a.json.to, a.json.range]).toEqual([b.json.from, b.json.to, b.json.range]);
      expect(a.json.range).toBe(query.startsWith('from=') ? 'requested' : 'current-month');
      // The traffic of this run is all in the current month: every range holds the whole ledger.
      expect(a.json.totals.costUsd).toBe(direct.cost);
      expect(a.json.totals.attempts).toBe(direct.attempts);
    }
    const monthly = await spend(`from=${months.from}&to=${months.to}&granularity=month&source=clickhouse&format=csv`);
    expect(monthly.text).toBe((await spend(`from=${months.from}&to=${months.to}&granularity=month&source=postgres&format=csv`)).text);
    expect(monthly.text.split('\r\n')[1]).toMatch(new RegExp(`^${months.from.slice(0, 7)},`));
  });

  test('switchyard spend on DATABASE_URL: with CLICKHOUSE_URL it reads ClickHouse, without it the ledger, and prints the same numbers', async () => {
    const databaseUrl = gw.gateway.platform.environment.databaseUrl;
    expect(databaseUrl).toBeTruthy(); // CI runs this suite on a scratch PostgreSQL database
    const args = ['spend', '--group-by', 'tenant,model,alias', '--granularity', 'week', '--format', 'json'];
    const env = { ...process.env, DATABASE_URL: databaseUrl!, SWITCHYARD_DATA_DIR: ':memory:', LOG_LEVEL: 'error' };
    const [withClickHouse, withoutClickHouse] = await Promise.all([runCli(args, { ...env, CLICKHOUSE_URL: ch.url }), runCli(args, { ...env, CLICKHOUSE_URL: '' })]);
    expect([withClickHouse.code, withClickHouse.stderr, withoutClickHouse.code, withoutClickHouse.stderr]).toEqual([0, '', 0, '']);
    const [a, b] = [JSON.parse(withClickHouse.stdout), JSON.parse(withoutClickHouse.stdout)];
    expect([a.source, b.source, a.range]).toEqual(['clickhouse', 'postgres', 'current-month']);
    expect(a.rows).toEqual(b.rows);
    expect(a.totals).toEqual(b.totals);
    const [direct] = await ledger<{ cost: string }>(`SELECT sum(cost_usd)::text AS cost FROM cost_ledger`);
    expect(a.totals.costUsd).toBe(direct.cost);
    const csv = await runCli(['spend', '--group-by', 'tenant,model,alias', '--format', 'csv'], { ...env, CLICKHOUSE_URL: ch.url });
    expect(csv.stderr).toMatch(/by month, from clickhouse\n$/);
    expect(csvObjects(csv.stdout).reduce((sum, r) => sum.plus(r.cost_usd), new Decimal(0)).toFixed(12)).toBe(direct.cost);
  }, 60_000);

  test('every dimension and every filter gives the same answer from both sources', async () => {
    const base = `from=${range.day.from}&to=${range.day.to}&granularity=day`;
    for (const query of [
      `${base}&groupBy=tenant,key,alias,deployment,provider,model`,
      `${base}&groupBy=deployment&tenant=acme`,
      `${base}&groupBy=alias,model&key=${ANALYTICS_KEYS.globexApp}`,
      `${base}&groupBy=provider&model=model-backup&alias=chat&deployment=backup&provider=mock-upstream`,
      `${base}`,
    ]) {
      const [a, b] = await Promise.all([spend(`${query}&source=clickhouse`), spend(`${query}&source=postgres`)]);
      expect(a.status).toBe(200);
      expect(a.json.rows).toEqual(b.json.rows);
      expect(a.json.totals).toEqual(b.json.totals);
    }
    const acme = await spend(`${base}&groupBy=tenant&tenant=acme&source=clickhouse`);
    expect(acme.json.rows.map((r: any) => r.tenant)).toEqual(['acme']);
  });

  test('the rollups also count every attempt and error (finance and operations query them directly)', async () => {
    const [events] = await ledger<{ attempts: number; errors: number }>(
      `SELECT count(*)::int AS attempts, count(*) FILTER (WHERE data->>'outcome' <> 'success')::int AS errors FROM events WHERE event_type = 'AttemptFinished'`,
    );
    for (const table of ['spend_hourly', 'spend_daily']) {
      const [rollup] = await ch.rows(`SELECT toString(sum(attempts)) AS attempts, toString(sum(errors)) AS errors,
        toString(uniqExactMerge(requests)) AS requests FROM ${ch.database}.${table}`);
      expect(Number(rollup.attempts)).toBe(events.attempts);
      expect(Number(rollup.errors)).toBe(events.errors);
      const [requests] = await ledger<{ n: number }>(`SELECT count(DISTINCT data->>'requestId')::int AS n FROM events WHERE event_type = 'AttemptFinished'`);
      expect(Number(rollup.requests)).toBe(requests.n);
    }
    const [quantiles] = await ch.rows(`SELECT quantilesTDigestMerge(0.5, 0.9, 0.99)(latency_ms_quantiles) AS q FROM ${ch.database}.spend_daily`);
    expect(quantiles.q).toHaveLength(3);
    expect(quantiles.q[0]).toBeGreaterThanOrEqual(0);
  });

  test("the five finance queries of docs/analytics.md and its consistency check run on this server and answer", async () => {
    const queries = docsSqlBlocks('analytics.md', 'finance-queries');
    expect(queries).toHaveLength(5);
    for (const query of queries) {
      const rows = await ch.rows(query.replaceAll('switchyard.', `${ch.database}.`));
      expect([query.split('\n')[0], rows.length > 0]).toEqual([query.split('\n')[0], true]);
    }
    // Query 1 (spend per tenant and day) adds up to the ledger.
    const perTenant = await ch.rows(queries[0].replaceAll('switchyard.', `${ch.database}.`));
    const [billed] = await ledger<{ cost: string }>(`SELECT sum(cost_usd)::text AS cost FROM cost_ledger`);
    const total = perTenant.reduce((sum: bigint, row: any) => sum + BigInt(row.spend_usd.replace('.', '')), 0n);
    expect(total).toBe(BigInt(billed.cost.replace('.', '')));
    const [consistency] = docsSqlBlocks('analytics.md', 'consistency-query');
    expect(await ch.rows(consistency.replaceAll('switchyard.', `${ch.database}.`))).toEqual([]);
  });

  test('ClickHouse schema is recorded in its own migration table', async () => {
    const rows = await ch.rows(`SELECT version, name FROM ${ch.database}.schema_migrations ORDER BY version`);
    expect(rows).toEqual([
      { version: 1, name: 'attempts' }, { version: 2, name: 'spend-rollups' }, { version: 3, name: 'cache-hits' }, { version: 4, name: 'wide-token-counts' },
    ]);
    // Issue 32: token counts are 64-bit, like the ledger's bigint (3e9 prompt tokens no longer fail the insert).
    const types = await ch.rows<{ name: string; type: string }>(
      `SELECT name, type FROM system.columns WHERE database = '${ch.database}' AND table = 'attempts' AND name LIKE '%_tokens' ORDER BY name`);
    expect(types.map((column) => column.type)).toEqual(Array(5).fill('UInt64'));
  });

  test('a checkpoint moved back (a restored backup) replays into ClickHouse without counting anything twice', async () => {
    const before = await spend(`from=${range.day.from}&to=${range.day.to}&granularity=day&groupBy=tenant,key,model&source=clickhouse`);
    await ledger(`UPDATE projection_checkpoints SET transaction_id = '0', global_position = 0 WHERE name = 'clickhouse-analytics'`);
    // The worker notices the moved checkpoint, re-reads its high-water mark from ClickHouse and skips what is there.
    await mixedTraffic(gw.url, gw.key, 3);
    await settle();
    const [{ events }] = await ledger<{ events: number }>(`SELECT count(*)::int AS events FROM events WHERE event_type = 'AttemptFinished'`);
    const [raw] = await ch.rows(`SELECT toString(count()) AS n FROM ${ch.database}.attempts`);
    expect(Number(raw.n)).toBe(events);
    const after = await Promise.all(['clickhouse', 'postgres'].map((source) =>
      spend(`from=${range.day.from}&to=${range.day.to}&granularity=day&groupBy=tenant,key,model&source=${source}`)));
    expect(after[0].json.totals).toEqual(after[1].json.totals);
    expect(after[0].json.totals.attempts).toBeGreaterThan(before.json.totals.attempts);
  });

  test('while ClickHouse is behind the ledger, source=auto answers from PostgreSQL and says so', async () => {
    const query = `from=${range.day.from}&to=${range.day.to}&granularity=day&groupBy=tenant`;
    expect((await spend(query)).json.source).toBe('clickhouse');
    // Stop the projections and move ClickHouse's checkpoint behind the ledger's, as during a rebuild.
    await gw.gateway.platform.runner.stop();
    await ledger(`UPDATE projection_checkpoints SET transaction_id = '0', global_position = 0 WHERE name = 'clickhouse-analytics'`);
    const answer = await spend(query);
    expect(answer.status).toBe(200);
    expect(answer.json.source).toBe('postgres');
    expect(answer.json.fallback).toMatch(/catching up/);
    expect(answer.headers.get('x-switchyard-analytics-source')).toBe('postgres');
    // Explicitly asking for ClickHouse still works (finance may accept a lagging answer).
    expect((await spend(`${query}&source=clickhouse`)).json.source).toBe('clickhouse');
  });
});
