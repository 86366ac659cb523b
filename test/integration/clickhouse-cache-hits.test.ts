import { AdminClient } from '../support/admin-client.js';
import { ANALYTICS_KEYS, analyticsYaml } from '../support/analytics-fixtures.js';
import { type ScratchClickHouse, scratchClickHouse } from '../support/clickhouse.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';
import { docsSqlBlocks } from '../support/docs-snippets.js';
import { requireService } from '../support/services.js';

const clickhouseUrl = requireService('CLICKHOUSE_URL');
const describeWithClickHouse = clickhouseUrl ? describe : describe.skip;
const ADMIN_TOKEN = 'cache-hits-suite-admin-token-0123';
const HOUR = 3_600_000;
const DAY = 86_400_000;

/**
 * Exact-cache hits in ClickHouse analytics against a real server: every RequestServedFromCache is one
 * `cache_hits` row, and the spend API's cache-hit counts and savings from the rollups equal the ledger's
 * cache_hit rows to the last of their 12 decimals — also after a replay and after a rebuild.
 */
describeWithClickHouse('ClickHouse analytics: exact-cache hits and their savings equal the ledger', () => {
  let gw: TestGateway;
  let ch: ScratchClickHouse;
  let admin: AdminClient;
  let round = 0;

  const ledger = <Row>(sql: string, params: unknown[] = []) => gw.gateway.platform.database.query<Row>(sql, params);
  const settle = async () => {
    await gw.gateway.platform.committer.drain();
    await gw.gateway.platform.runner.catchUp(['cost-ledger', 'clickhouse-analytics']);
  };
  const spend = (query: string) => admin.get(`/analytics/spend?${query}`);

  /**
   * From each of three keys (two tenants): distinct questions answered by a provider (with different
   * lengths, so savings differ), then repeats of some of them, buffered and streamed, which the cache answers.
   */
  async function traffic(): Promise<void> {
    round++;
    const keys = [gw.key, process.env.ANALYTICS_BATCH_KEY!, process.env.ANALYTICS_GLOBEX_KEY!];
    await Promise.all(keys.map(async (key, k) => {
      const client = { ...gw, key };
      const ask = (i: number, stream = false) => ({
        model: 'chat', stream, max_tokens: 40 + i, messages: [{ role: 'user', content: `round ${round} key ${k} question ${i} ${'why '.repeat(i)}` }],
      });
      for (let i = 0; i < 4; i++) expect((await postJson(client, '/v1/chat/completions', ask(i))).headers.get('x-switchyard-cache')).toBe('miss');
      for (const i of [0, 1, 1, 3]) expect((await postJson(client, '/v1/chat/completions', ask(i))).headers.get('x-switchyard-cache')).toBe('hit');
      expect((await postJson(client, '/v1/chat/completions', ask(4, true))).headers.get('x-switchyard-cache')).toBe('miss');
      expect((await postJson(client, '/v1/chat/completions', ask(4, true))).headers.get('x-switchyard-cache')).toBe('hit');
    }));
    await settle();
  }

  /** Day and hour ranges that hold every ledger row. */
  async function ranges() {
    const [bounds] = await ledger<{ first: Date; last: Date }>(`SELECT min(recorded_at) AS first, max(recorded_at) AS last FROM cost_ledger`);
    const floor = (at: Date, step: number) => Math.floor(new Date(at).getTime() / step) * step;
    const iso = (ms: number) => new Date(ms).toISOString();
    return {
      hour: { from: iso(floor(bounds.first, HOUR)), to: iso(floor(bounds.last, HOUR) + HOUR) },
      day: { from: iso(floor(bounds.first, DAY)), to: iso(floor(bounds.last, DAY) + DAY) },
    };
  }

  /** Raw rows, rollups and the spend API from both sources all agree with the ledger. */
  async function expectEqualToLedger(): Promise<void> {
    const [events] = await ledger<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE event_type = 'RequestServedFromCache'`);
    const [direct] = await ledger<{ hits: number; saved: string; cost: string; attempts: number }>(
      `SELECT count(*) FILTER (WHERE outcome = 'cache_hit')::int AS hits, sum(saved_usd)::text AS saved, sum(cost_usd)::text AS cost,
              count(*) FILTER (WHERE outcome <> 'cache_hit')::int AS attempts FROM cost_ledger`,
    );
    expect(direct.hits).toBe(events.n);
    const [raw] = await ch.rows(`SELECT toString(count()) AS n, toString(uniqExact(request_id)) AS requests, toString(sum(saved_usd)) AS saved,
      toString(sum(cost_usd)) AS cost, toString(sum(input_tokens) + sum(output_tokens)) AS tokens FROM ${ch.database}.cache_hits`);
    expect(raw).toEqual({ n: String(events.n), requests: String(events.n), saved: direct.saved, cost: '0.000000000000', tokens: '0' });
    for (const table of ['cache_savings_hourly', 'cache_savings_daily']) {
      const [rollup] = await ch.rows(`SELECT toString(sum(cache_hits)) AS hits, toString(sum(saved_usd)) AS saved FROM ${ch.database}.${table}`);
      expect(rollup).toEqual({ hits: String(events.n), saved: direct.saved });
    }
    const range = await ranges();
    for (const granularity of ['hour', 'day'] as const) {
      for (const groupBy of ['tenant,key,model', 'alias,deployment,provider']) {
        const query = `from=${range[granularity].from}&to=${range[granularity].to}&granularity=${granularity}&groupBy=${groupBy}`;
        const [fromClickHouse, fromPostgres] = await Promise.all([spend(`${query}&source=clickhouse`), spend(`${query}&source=postgres`)]);
        expect(fromClickHouse.json.source).toBe('clickhouse');
        expect(fromClickHouse.json.rows).toEqual(fromPostgres.json.rows);
        expect(fromClickHouse.json.totals).toEqual(fromPostgres.json.totals);
        expect(fromClickHouse.json.totals).toMatchObject({ cacheHits: direct.hits, savedUsd: direct.saved, costUsd: direct.cost, attempts: direct.attempts });
        const csv = await Promise.all([spend(`${query}&source=clickhouse&format=csv`), spend(`${query}&source=postgres&format=csv`)]);
        expect(csv[0].text).toBe(csv[1].text);
      }
    }
    // Per tenant and key, the savings of the rows add up to the ledger's, exactly.
    const query = `from=${range.day.from}&to=${range.day.to}&granularity=day&groupBy=tenant,key&source=clickhouse`;
    const { json } = await spend(query);
    const perKey = await ledger<{ tenant_id: string; key_id: string; saved: string; hits: number }>(
      `SELECT tenant_id, key_id, sum(saved_usd)::text AS saved, count(*) FILTER (WHERE outcome = 'cache_hit')::int AS hits FROM cost_ledger GROUP BY 1, 2`,
    );
    expect(perKey).toHaveLength(3);
    for (const group of perKey) {
      const rows = json.rows.filter((r: any) => r.tenant === group.tenant_id && r.key === group.key_id);
      expect(rows.reduce((sum: bigint, r: any) => sum + BigInt(r.savedUsd.replace('.', '')), 0n)).toBe(BigInt(group.saved.replace('.', '')));
      expect(rows.reduce((sum: number, r: any) => sum + r.cacheHits, 0)).toBe(group.hits);
    }
  }

  beforeAll(async () => {
    ch = scratchClickHouse(clickhouseUrl!);
    gw = await startTestGateway({ yaml: analyticsYaml, environment: { adminToken: ADMIN_TOKEN, clickhouseUrl: ch.url, cache: { exactCacheEnabled: true } } });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
    await traffic();
  }, 120_000);

  afterAll(async () => {
    await gw?.close();
    await ch?.drop();
  });

  test('every cache hit is one zero-cost row with its saving; rollups and the spend API equal the ledger to the last decimal', async () => {
    const [saved] = await ledger<{ hits: number; distinct: number }>(
      `SELECT count(*)::int AS hits, count(DISTINCT saved_usd)::int AS distinct FROM cost_ledger WHERE outcome = 'cache_hit'`,
    );
    expect(saved.hits).toBe(15); // five repeats from each of three keys
    expect(saved.distinct).toBeGreaterThan(1);
    await expectEqualToLedger();
    const keys = await ledger<{ key_id: string }>(`SELECT DISTINCT key_id FROM cost_ledger WHERE outcome = 'cache_hit' ORDER BY 1`);
    expect(keys.map((k) => k.key_id)).toEqual(Object.values(ANALYTICS_KEYS).sort());
  });

  test("the savings query of docs/analytics.md and its consistency check run on this server and add up to the ledger", async () => {
    const [query] = docsSqlBlocks('analytics.md', 'cache-savings-query');
    const rows = await ch.rows<{ tenant_id: string; spend_usd: string; saved_by_cache_usd: string; cache_hits: string }>(query.replaceAll('switchyard.', `${ch.database}.`));
    const perTenant = await ledger<{ tenant_id: string; spent: string; saved: string; hits: string }>(
      `SELECT tenant_id, sum(cost_usd)::text AS spent, sum(saved_usd)::text AS saved, count(*) FILTER (WHERE outcome = 'cache_hit')::text AS hits
       FROM cost_ledger GROUP BY 1 ORDER BY 1`,
    );
    // One day unless the run crossed midnight: add the days up per tenant.
    const sum = (tenant: string, field: 'spend_usd' | 'saved_by_cache_usd') =>
      rows.filter((r) => r.tenant_id === tenant).reduce((total, r) => total + BigInt(r[field].replace('.', '')), 0n);
    expect(perTenant.map((t) => t.tenant_id)).toEqual(['acme', 'globex']);
    for (const tenant of perTenant) {
      expect(sum(tenant.tenant_id, 'spend_usd')).toBe(BigInt(tenant.spent.replace('.', '')));
      expect(sum(tenant.tenant_id, 'saved_by_cache_usd')).toBe(BigInt(tenant.saved.replace('.', '')));
      expect(rows.filter((r) => r.tenant_id === tenant.tenant_id).reduce((n, r) => n + Number(r.cache_hits), 0)).toBe(Number(tenant.hits));
    }
    const [consistency] = docsSqlBlocks('analytics.md', 'consistency-query');
    expect(await ch.rows(consistency.replaceAll('switchyard.', `${ch.database}.`))).toEqual([]);
  });

  test('ClickHouse schema records the cache-hit step', async () => {
    const rows = await ch.rows(`SELECT version, name FROM ${ch.database}.schema_migrations ORDER BY version`);
    expect(rows).toEqual([
      { version: 1, name: 'attempts' }, { version: 2, name: 'spend-rollups' }, { version: 3, name: 'cache-hits' }, { version: 4, name: 'wide-token-counts' },
    ]);
  });

  test('a checkpoint moved back replays without counting a cache hit twice', async () => {
    await ledger(`UPDATE projection_checkpoints SET transaction_id = '0', global_position = 0 WHERE name = 'clickhouse-analytics'`);
    await traffic();
    const [hits] = await ledger<{ n: number }>(`SELECT count(*)::int AS n FROM cost_ledger WHERE outcome = 'cache_hit'`);
    expect(hits.n).toBe(30);
    await expectEqualToLedger();
  });

  test('a rebuild reproduces the same rows and rollups', async () => {
    await gw.gateway.platform.runner.rebuild('clickhouse-analytics');
    await settle();
    await expectEqualToLedger();
  });
});
