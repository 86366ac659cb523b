/**
 * The console at scale (issue 38 §4, docs/benchmarks.md "Console at scale"): builds a PostgreSQL database of
 * its own holding 1,000,000 events — 200,000 requests of realistic shape over 30 days (tenants, keys,
 * aliases, fallbacks with usage and cost, refusals, cache hits, failures) plus control-plane history (the
 * catalog, tenants and keys applied by `switchyard apply`, key changes, breaker incidents) — brings its read
 * models to the head with the product's own projections, starts the gateway on it and times every page the
 * console asks for. Run compiled: `npm run bench:console` (`--reuse` measures an existing database again).
 *
 * How the state is reached: the catalog through `switchyard apply` (the product's commands and events);
 * the history written straight into `events` in the stored format (typed payloads, schema versions, request
 * journal metadata, UUIDv7 ids, one transaction per ~5,000 events in time order) — what a gateway would have
 * appended; then the durable projections (cost ledger with tenant spend, request summaries, audit chain
 * with signed checkpoints) replay the log from position 0 with the ProjectionRunner, as a new deployment's
 * projector does. No read model is written by the bench itself.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { upcasters } from '../events/upcasters.js';
import { AuditChainProjection, openCheckpointSigner } from '../projections/audit-chain/index.js';
import { ClickHouseAnalyticsProjection, ClickHouseConnection, clickHouseSettings } from '../projections/clickhouse-analytics/index.js';
import { CostLedgerProjection } from '../projections/cost-ledger/index.js';
import { RequestSummariesProjection } from '../projections/request-summaries/index.js';
import { openDatabase } from '../src/kernel/database/open-database.js';
import { SqlEventStore } from '../src/kernel/event-store/sql-event-store.js';
import { ProjectionRunner } from '../src/kernel/projections/projection-runner.js';
import { consolePages, type PageCall, type PageFacts } from './console/console-pages.js';
import { type LogPlan, countRequestEvents, writeScaleLog } from './console/scale-log.js';
import { scaleCatalog, scaleYaml } from './console/scale-config.js';
import { percentile } from './measure/summary.js';
import { defaultResultsDir, gatewayMain } from './paths.js';

interface Options {
  baseUrl: string;
  /** ClickHouse's server (the analytics store at this size); null: analytics from PostgreSQL only. */
  clickhouse: string | null;
  database: string;
  events: number;
  requests: number;
  reuse: boolean;
  samples: number;
  port: number;
}

const ADMIN_TOKEN = 'console-scale-admin-token-0123456789abcdef';
/** An HMAC key of the bench's own (no secret: the database is a scratch one). */
const AUDIT_HMAC_KEY = 'console-scale-audit-checkpoint-hmac-key-0123456789abcdef';
const BOUND_MS = 1000;

function parse(argv: string[]): Options {
  const options: Options = {
    baseUrl: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres', clickhouse: process.env.CLICKHOUSE_URL || null, database: 'switchyard_console_scale',
    events: 1_000_000, requests: 200_000, reuse: false, samples: 7, port: 18_480,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--reuse') {
      options.reuse = true;
      continue;
    }
    if (flag === '--no-clickhouse') {
      options.clickhouse = null;
      continue;
    }
    if (flag === '--database-url') options.baseUrl = value;
    else if (flag === '--clickhouse-url') options.clickhouse = value;
    else if (flag === '--database') options.database = value;
    else if (flag === '--events') options.events = Number(value);
    else if (flag === '--requests') options.requests = Number(value);
    else if (flag === '--samples') options.samples = Number(value);
    else if (flag === '--port') options.port = Number(value);
    else throw new Error(`unknown option ${flag} (--database-url URL, --clickhouse-url URL, --no-clickhouse, --database NAME, --events N, --requests N, --samples N, --port N, --reuse)`);
    i++;
  }
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(options.database)) throw new Error('--database must be a plain lower-case name');
  if (!(options.requests > 0) || !(options.events > options.requests) || !(options.samples >= 1)) throw new Error('--requests, --events and --samples must be positive (events more than requests)');
  return options;
}

function databaseUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

function run(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [gatewayMain, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`switchyard ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`))));
  });
}

/** What the built database holds, or null when it is not one this bench finished building. */
async function built(url: string): Promise<{ events: number; requests: number } | null> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch {
    return null;
  }
  try {
    const [done] = (await client.query(`SELECT count(*)::int AS n FROM projection_checkpoints WHERE name IN ('cost-ledger', 'request-summaries', 'audit-chain')`).catch(() => ({ rows: [{ n: 0 }] }))).rows;
    if (done.n !== 3) return null;
    const [counts] = (await client.query(`SELECT (SELECT max(global_position) FROM events)::int AS events, (SELECT count(*) FROM request_summaries)::int AS requests`)).rows;
    return counts;
  } finally {
    await client.end();
  }
}

async function build(options: Options, url: string, env: NodeJS.ProcessEnv, configPath: string): Promise<void> {
  const admin = new pg.Client({ connectionString: options.baseUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${options.database} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${options.database}`);
  await admin.end();
  if (options.clickhouse) {
    const server = new URL(options.clickhouse);
    const dropped = await fetch(`${server.origin}/?query=${encodeURIComponent(`DROP DATABASE IF EXISTS ${options.database}`)}`, { method: 'POST' });
    if (!dropped.ok) throw new Error(`ClickHouse: ${await dropped.text()}`);
  }

  let began = performance.now();
  await run(['apply', '-f', configPath], env);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const control = Number((await client.query(`SELECT count(*)::int AS n FROM events`)).rows[0].n);
    log(`catalog applied: ${control} control-plane events (${seconds(began)})`);
    const versions = new Map<string, number>((await client.query(`SELECT stream_id, max(stream_version)::int AS v FROM events GROUP BY stream_id`)).rows.map((r) => [r.stream_id, r.v]));
    const catalog = scaleCatalog();
    const plan: LogPlan = { events: options.events, requests: options.requests, days: 30, denseRequests: Math.round(options.requests * 0.075), denseMinutes: 15, end: new Date(Date.now() - 60_000) };
    const requestEvents = countRequestEvents(plan, catalog);
    const rest = options.events - control - requestEvents;
    if (rest < 0) throw new Error(`${options.requests} requests make ${requestEvents} events: more than --events ${options.events} allows`);
    // The rest of the log: about 60 % breaker incidents (three events each), the remainder key changes.
    const breakerIncidents = Math.floor((rest * 0.6) / 3);
    const keyUpdates = rest - breakerIncidents * 3;
    log(`writing ${options.events} events: ${requestEvents} of ${options.requests} requests, ${breakerIncidents * 3} of ${breakerIncidents} breaker incidents, ${keyUpdates} key changes`);
    began = performance.now();
    let shown = 0;
    const written = await writeScaleLog(client, catalog, plan, { keyUpdates, breakerIncidents }, versions, (n) => {
      if (n - shown >= 100_000) {
        shown = n;
        log(`  ${n} events written (${seconds(began)})`);
      }
    });
    await client.query('ANALYZE events');
    log(`log written: ${written + control} events in ${seconds(began)}`);
  } finally {
    await client.end();
  }

}

/**
 * The read models as a deployment's projector reaches them: every durable projection from its checkpoint
 * (position 0 in a new database) to the head. At the head already, this is a no-op; ClickHouse, asked for
 * the first time on a database built without it, is filled here rather than while pages are timed.
 */
async function catchUpReadModels(url: string, clickhouseUrl: string | null): Promise<void> {
  const began = performance.now();
  const database = await openDatabase({ databaseUrl: url, dataDir: null });
  try {
    const store = new SqlEventStore(database, upcasters.upcast);
    const runner = new ProjectionRunner(store, database, { pollIntervalMs: 60_000, listen: false, batchSize: 2000, runDurable: true });
    const signer = openCheckpointSigner({ signingKeyRef: 'env:SY_SCALE_AUDIT_KEY', checkpointIntervalMs: 5_000 });
    runner.addDurable(new CostLedgerProjection());
    runner.addDurable(new RequestSummariesProjection());
    runner.addDurable(new AuditChainProjection(signer, 5_000));
    const clickhouse = clickhouseUrl ? new ClickHouseConnection(clickHouseSettings(clickhouseUrl)) : null;
    if (clickhouse) {
      const analytics = new ClickHouseAnalyticsProjection(clickhouse);
      await analytics.prepare();
      runner.addDurable(analytics);
    }
    const follow = setInterval(() => log(`  projections at ${runner.status().map((s) => `${s.name} ${s.lastGlobalPosition}`).join(', ')} (${seconds(began)})`), 15_000);
    try {
      await runner.catchUp(undefined, 3_600_000);
    } finally {
      clearInterval(follow);
      await runner.stop();
      await clickhouse?.close();
    }
    await database.query('ANALYZE');
  } finally {
    await database.close();
  }
  log(`read models at the head in ${seconds(began)}`);
}

async function startGateway(env: NodeJS.ProcessEnv, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [gatewayMain, 'serve'], { env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'ignore', 'inherit'] });
  const began = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the gateway exited with ${child.exitCode}`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200, () => false);
    if (ready) break;
    if (Date.now() - began > 300_000) throw new Error('the gateway was not ready within 5 minutes');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  log(`gateway ready in ${((Date.now() - began) / 1000).toFixed(1)} s`);
  return child;
}

async function call(port: number, page: PageCall): Promise<{ ms: number; status: number; bytes: number; json: any }> {
  const began = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}${page.path}`, {
    method: page.method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(page.body ? { 'content-type': 'application/json' } : {}) },
    ...(page.body ? { body: JSON.stringify(page.body) } : {}),
  });
  const text = await response.text();
  const ms = performance.now() - began;
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // NDJSON or CSV: the size is what matters.
  }
  return { ms, status: response.status, bytes: Buffer.byteLength(text), json };
}

/** The ids and tokens the pages need, found through the API itself (and the database for a deep position). */
async function facts(port: number, url: string): Promise<PageFacts> {
  const catalog = scaleCatalog();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const [deep] = (await client.query(`SELECT global_position::int AS p FROM events ORDER BY global_position DESC OFFSET (SELECT count(*) / 10 FROM events) LIMIT 1`)).rows;
    const [story] = (await client.query(`SELECT request_id FROM request_summaries WHERE attempts = 3 AND status = 'success' ORDER BY at DESC LIMIT 1`)).rows;
    let token = '';
    for (let page = 0; page < 100; page++) {
      const answer = await call(port, { name: 'walk', method: 'GET', path: `/admin/v1/requests?limit=200${token ? `&pageToken=${token}` : ''}` });
      if (!answer.json.nextPageToken) break;
      token = answer.json.nextPageToken;
    }
    const today = new Date();
    const midnight = (offset: number) => new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + offset)).toISOString();
    return {
      tenant: catalog.tenants[7].id, key: catalog.keys[141].id, alias: catalog.aliases[3].name, deployment: catalog.deployments[5].id,
      request: story.request_id, deepPosition: deep.p, deepRequestToken: token,
      day: { from: midnight(-14), to: midnight(-13) }, month: { from: midnight(-29), to: midnight(1) },
    };
  } finally {
    await client.end();
  }
}

interface Row { name: string; status: number; bytes: number; first: number; p50: number; max: number; rows: string; unbounded: string | null }

function rowsOf(json: any): string {
  if (!json || typeof json !== 'object') return '';
  // The audit verification: whether the chain verified, and over how many events.
  if (typeof json.ok === 'boolean' && 'verifiedEvents' in json) return `ok=${json.ok}, ${json.verifiedEvents} events, ${json.checkpoints?.verified ?? 0} checkpoints`;
  if (typeof json.source === 'string' && Array.isArray(json.rows)) return `${json.rows.length} (${json.source})`;
  for (const field of ['requests', 'data', 'attempts', 'projections', 'breakers', 'rows']) if (Array.isArray(json[field])) return String(json[field].length);
  return '';
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const url = databaseUrl(options.baseUrl, options.database);
  // ClickHouse's database of the bench's own, named as the PostgreSQL one.
  const clickhouseUrl = options.clickhouse ? `${new URL(options.clickhouse).origin}/${options.database}` : null;
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-console-scale-'));
  const configPath = join(dir, 'switchyard.yaml');
  writeFileSync(configPath, scaleYaml(scaleCatalog()));
  // The same key every run: checkpoints signed when the database was built must verify when it is reused.
  const auditKey = process.env.SY_SCALE_AUDIT_KEY ?? AUDIT_HMAC_KEY;
  const env: NodeJS.ProcessEnv = {
    ...process.env, DATABASE_URL: url, SWITCHYARD_CONFIG: configPath, SY_SCALE_UPSTREAM_KEY: 'not-called', SY_SCALE_AUDIT_KEY: auditKey,
    SWITCHYARD_AUDIT_SIGNING_KEY: 'env:SY_SCALE_AUDIT_KEY', ADMIN_TOKEN, LOG_LEVEL: 'warn', CLICKHOUSE_URL: clickhouseUrl ?? '', REDIS_URL: '',
  };
  process.env.SY_SCALE_AUDIT_KEY = auditKey;
  const existing = options.reuse ? await built(url) : null;
  if (existing) log(`reusing ${options.database}: ${existing.events} events, ${existing.requests} requests`);
  else await build(options, url, env, configPath);
  await catchUpReadModels(url, clickhouseUrl);
  const held = await built(url);
  log(`database ${options.database}: ${held?.events} events, ${held?.requests} requests`);

  const gateway = await startGateway(env, options.port);
  try {
    const pageFacts = await facts(options.port, url);
    const results: Row[] = [];
    for (const page of consolePages(pageFacts)) {
      const first = await call(options.port, page);
      const samples: number[] = [];
      for (let i = 0; i < (page.unbounded === 'action' ? 2 : options.samples); i++) samples.push((await call(options.port, page)).ms);
      samples.sort((a, b) => a - b);
      results.push({
        name: page.name, status: first.status, bytes: first.bytes, first: first.ms, p50: percentile(samples, 50), max: Math.max(first.ms, samples[samples.length - 1]),
        rows: rowsOf(first.json), unbounded: page.unbounded ?? null,
      });
      log(`  ${page.name}: ${first.status} first ${first.ms.toFixed(0)} ms, p50 ${percentile(samples, 50).toFixed(0)} ms`);
    }
    const lines = [
      `| page | status | rows | bytes | first (ms) | P50 (ms) | max (ms) | within ${BOUND_MS} ms |`,
      '|---|---|---|---|---|---|---|---|',
      ...results.map((r) => `| ${r.name} | ${r.status} | ${r.rows} | ${r.bytes} | ${r.first.toFixed(0)} | ${r.p50.toFixed(0)} | ${r.max.toFixed(0)} | ${r.unbounded ? `(${r.unbounded})` : r.max <= BOUND_MS && r.status < 400 ? 'yes' : '**no**'} |`),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    mkdirSync(defaultResultsDir, { recursive: true });
    const file = join(defaultResultsDir, `console-scale-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, `${JSON.stringify({ database: held, samples: options.samples, facts: pageFacts, results }, null, 2)}\n`);
    log(`results: ${file}`);
    const slow = results.filter((r) => !r.unbounded && (r.max > BOUND_MS || r.status >= 400));
    if (slow.length) {
      log(`over ${BOUND_MS} ms or failing: ${slow.map((r) => r.name).join(', ')}`);
      process.exitCode = 1;
    }
  } finally {
    gateway.kill('SIGTERM');
    await new Promise((resolve) => gateway.once('exit', resolve));
  }
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack ?? error.message}\n`);
  process.exit(1);
});
