import { spawn } from 'node:child_process';
import { AuditVerifier } from '../../modules/audit/audit-verifier.js';
import { analyticsYaml, mixedTraffic } from '../support/analytics-fixtures.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import { MAIN, runCli } from '../support/cli-process.js';
import { type ScratchClickHouse, scratchClickHouse } from '../support/clickhouse.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { createScratchDatabase, requireService } from '../support/services.js';

const databaseUrl = requireService('DATABASE_URL');
const clickhouseUrl = requireService('CLICKHOUSE_URL');
const describeWithServices = databaseUrl && clickhouseUrl ? describe : describe.skip;
const DURABLE = ['cost-ledger', 'request-summaries', 'audit-chain', 'clickhouse-analytics'] as const;
const AUDIT_KEY = 'rebuild-suite-audit-key-0123456789abcdef';

interface Snapshot {
  ledger: unknown[];
  summaries: unknown[];
  spend: unknown[];
  chain: unknown[];
  attempts: unknown[];
  hourly: unknown[];
  daily: unknown[];
}

describeWithServices('projections rebuild: every durable projection reproduces its rows, also while the server serves', () => {
  let db: { url: string; drop: () => Promise<void> };
  let ch: ScratchClickHouse;
  let gw: TestGateway;

  const query = <Row = Record<string, unknown>>(sql: string) => gw.gateway.platform.database.query<Row>(sql);
  const settle = async () => {
    await gw.gateway.platform.committer.drain();
    await gw.gateway.platform.runner.catchUp([...DURABLE]);
  };
  /** Everything the three projections wrote, in a stable order. Quantile states are approximate by design and left out. */
  const snapshot = async (): Promise<Snapshot> => {
    const rollup = (table: string, bucket: string) => ch.rows(
      `SELECT toString(${bucket}) AS bucket, tenant_id, key_id, alias, deployment_id, provider_id, model,
              toString(sum(attempts)) AS attempts, toString(sum(billable_attempts)) AS billable, toString(sum(errors)) AS errors,
              toString(sum(cancelled)) AS cancelled, toString(sum(prompt_cache_hits)) AS cache_hits,
              toString(sum(input_tokens)) AS input, toString(sum(cached_input_tokens)) AS cached, toString(sum(output_tokens)) AS output,
              toString(sum(cost_usd)) AS cost, toString(uniqExactMerge(requests)) AS requests, toString(uniqExactIfMerge(billable_requests)) AS billed
       FROM ${ch.database}.${table}
       GROUP BY ${bucket}, tenant_id, key_id, alias, deployment_id, provider_id, model
       ORDER BY ${bucket}, tenant_id, key_id, alias, deployment_id, provider_id, model`);
    return {
      ledger: await query(`SELECT *, cost_usd::text AS cost_usd FROM cost_ledger ORDER BY request_id, attempt`),
      summaries: await query(`SELECT *, at::text AS at, cost_usd::text AS cost_usd, input_tokens::text AS input_tokens, output_tokens::text AS output_tokens
        FROM request_summaries ORDER BY request_id`),
      spend: await query(`SELECT tenant_id, period, period_start, spent_usd::text AS spent FROM tenant_spend ORDER BY 1, 2, 3`),
      chain: await query(`SELECT c.sequence::text, c.global_position::text, c.transaction_id::text, c.event_id, c.prev_hash, c.hash FROM audit_chain c ORDER BY c.sequence`),
      attempts: await ch.rows(`SELECT *, toString(cost_usd) AS cost_usd, toString(input_cost_usd) AS input_cost_usd, toString(output_cost_usd) AS output_cost_usd,
        toString(cached_input_cost_usd) AS cached_input_cost_usd, toString(cache_write_cost_usd) AS cache_write_cost_usd
        FROM ${ch.database}.attempts ORDER BY request_id, attempt`),
      hourly: await rollup('spend_hourly', 'hour'),
      daily: await rollup('spend_daily', 'day'),
    };
  };

  beforeAll(async () => {
    process.env.REBUILD_SUITE_AUDIT_KEY = AUDIT_KEY;
    db = await createScratchDatabase(databaseUrl!);
    ch = scratchClickHouse(clickhouseUrl!);
    gw = await startTestGateway({
      databaseUrl: db.url, yaml: analyticsYaml,
      environment: { clickhouseUrl: ch.url, audit: { signingKeyRef: 'env:REBUILD_SUITE_AUDIT_KEY', checkpointIntervalMs: 0 } },
    });
    gw.mock.setDefaults({ chunkGapMs: 3, cachedTokens: 1 });
    gw.mock.addScenario({ model: 'model-primary', behaviour: { failureRate: 0.3, status: 503 } });
    gw.mock.addScenario({ model: 'model-shaky', behaviour: { errorAfterChunks: 2 } });
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    if (process.env.KEEP_SCRATCH) return void process.stderr.write(`kept ${db?.url} ${ch?.database}\n`);
    await db?.drop();
    await ch?.drop();
  });

  test('CLI rebuild of each projection while traffic flows, then a quiet rebuild: identical rows, history kept, chain still verifies', async () => {
    await mixedTraffic(gw.url, gw.key, 10);
    await settle();
    const before = await snapshot();
    expect(before.ledger.length).toBeGreaterThan(10);
    expect(before.attempts.length).toBeGreaterThan(before.ledger.length - 1);

    const env = {
      ...process.env, DATABASE_URL: db.url, CLICKHOUSE_URL: ch.url, LOG_LEVEL: 'error',
      REBUILD_SUITE_AUDIT_KEY: AUDIT_KEY, SWITCHYARD_AUDIT_SIGNING_KEY: 'env:REBUILD_SUITE_AUDIT_KEY',
    };
    for (const name of DURABLE) {
      // The server holds every lease: the CLI resets, the server replays while it keeps serving traffic.
      const rebuild = new Promise<{ code: number; stderr: string; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, [MAIN, 'projections', 'rebuild', name], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        child.once('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
      });
      const during = mixedTraffic(gw.url, gw.key, 4);
      const [result] = await Promise.all([rebuild, during]);
      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(new RegExp(`rebuilding ${name} \\[[#-]{30}\\]\\s+\\d+%`));
      expect(result.stderr).toMatch(new RegExp(`rebuilding ${name} \\[#{30}\\] 100%`));
      expect(result.stderr).toContain(`Rebuilt ${name} from position 0`);
    }
    await settle();
    const live = await snapshot();

    // What was there before the rebuilds is still there, row for row.
    const keyOf = (row: any) => `${row.request_id}#${row.attempt}`;
    const liveLedger = new Map(live.ledger.map((row: any) => [keyOf(row), row]));
    for (const row of before.ledger) expect(liveLedger.get(keyOf(row))).toEqual(row);
    const liveAttempts = new Map(live.attempts.map((row: any) => [keyOf(row), row]));
    for (const row of before.attempts) expect(liveAttempts.get(keyOf(row))).toEqual(row);
    expect(live.chain.slice(0, before.chain.length)).toEqual(before.chain);
    // A request settled before the rebuilds is summarised as it was.
    const liveSummaries = new Map(live.summaries.map((row: any) => [row.request_id, row]));
    for (const row of before.summaries as any[]) if (row.status !== 'incomplete') expect(liveSummaries.get(row.request_id)).toEqual(row);
    expect(live.summaries.length).toBeGreaterThan(before.summaries.length);
    expect(live.ledger.length).toBeGreaterThan(before.ledger.length);

    // A quiet rebuild of each reproduces exactly what the projections hold after serving through their rebuild.
    for (const name of DURABLE) await gw.gateway.platform.runner.rebuild(name);
    await settle();
    const quiet = await snapshot();
    expect(quiet).toEqual(live);

    // Checkpoints signed before the rebuilds still verify against the rebuilt chain.
    const report = await new AuditVerifier(gw.gateway.platform.database, gw.gateway.platform.auditSigner).verify();
    expect(report.problem).toBeNull();
    expect(report.ok).toBe(true);
    expect(report.checkpoints.verified).toBeGreaterThan(0);

    // projections status shows every projection caught up.
    // The JSON status and the refusal below run in this process (cli-in-process.ts: the same code without a
    // process's seconds of start-up each); the human status is a switchyard process of its own.
    const status = await runCliInProcess(['projections', 'status', '--json'], env);
    expect(status.code).toBe(0);
    const projections = JSON.parse(status.stdout).projections as Array<{ name: string; behind: number | null; position: number }>;
    for (const name of DURABLE) expect(projections.find((p) => p.name === name)).toMatchObject({ behind: 0 });
    const human = await runCli(['projections', 'status'], env);
    expect(human.stdout).toMatch(/^projection\s+kind\s+position\s+behind\s+detail$/m);
    expect(human.stdout).toMatch(/clickhouse-analytics\s+singleton\s+\d+\s+0\s+checkpoint moved .*attempts holds \d+ rows/);
  }, 120_000);

  test('an unknown projection name is refused and lists the rebuildable ones', async () => {
    const result = await runCliInProcess(['projections', 'rebuild', 'no-such'], { ...process.env, DATABASE_URL: db.url, CLICKHOUSE_URL: ch.url, LOG_LEVEL: 'error' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Rebuildable: cost-ledger, request-summaries, audit-chain, clickhouse-analytics');
  });
});
