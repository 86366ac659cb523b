/**
 * Switchyard benchmark: the mock provider at 0 ms, called directly (the baseline) and through Switchyard,
 * in the same run, closed loop and open loop. Figures are reported as ratios to the baseline; results go
 * to bench/results/<timestamp>.json. Usage:
 *   npm run bench -- [--duration 10] [--rate 300] [--connections 32] [--stream] [--durability default|strict|async]
 * With DATABASE_URL set the event store is that PostgreSQL server; otherwise embedded PGlite in a temp dir.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { generateApiKey } from '../modules/access/api-key/key-format.js';
import { MockProviderServer } from '../modules/providers/mock/mock-provider-server.js';
import { type LoadSpec, type Sample, closedLoop, openLoop, percentile } from './open-loop.js';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    rate: { type: 'string', default: '300' },
    connections: { type: 'string', default: '32' },
    stream: { type: 'boolean', default: false },
    durability: { type: 'string', default: 'default' },
  },
});
const durationMs = Number(values.duration) * 1000;
const rate = Number(values.rate);
const connections = Number(values.connections);

interface Summary {
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  p999: number;
}

function summarize(samples: Sample[], ms: number): Summary {
  const sorted = samples.map((s) => s.latencyMs).sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return {
    requests: samples.length,
    errors: samples.filter((s) => !s.ok).length,
    rps: round(samples.length / (ms / 1000)),
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    p999: round(percentile(sorted, 99.9)),
  };
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** With DATABASE_URL, the run gets a database of its own on that server (dropped afterwards). */
async function benchDatabase(): Promise<{ url: string | null; drop: () => Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) return { url: null, drop: async () => undefined };
  const name = `switchyard_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

async function startGateway(mockUrl: string, databaseUrl: string | null): Promise<{ child: ChildProcess; url: string; key: string }> {
  const key = generateApiKey();
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  const config = join(dir, 'switchyard.yaml');
  writeFileSync(config, `
providers:
  - { id: bench-mock, type: openai-compatible, baseUrl: "${mockUrl}/v1", allowPrivateNetwork: true }
deployments:
  - id: bench
    provider: bench-mock
    model: bench-model
    capabilities: [chat, streaming]
    contextWindow: 32000
    maxOutputTokens: 4096
    price: { inputPer1M: "1.00", outputPer1M: "2.00" }
aliases:
  - { name: bench, routes: [{ deployment: bench }] }
tenants:
  - { id: bench }
apiKeys:
  - { id: bench, tenant: bench, key: env:BENCH_KEY, scopes: [inference] }
`);
  const port = 18000 + Math.floor(Math.random() * 2000);
  const child = spawn(process.execPath, [join(here, '..', 'src', 'main.js'), 'serve'], {
    env: {
      ...process.env, PORT: String(port), SWITCHYARD_CONFIG: config, SWITCHYARD_DATA_DIR: join(dir, 'data'), BENCH_KEY: key,
      DATABASE_URL: databaseUrl ?? '',
      SWITCHYARD_DURABILITY: values.durability, LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { child, url, key };
    } catch {
      // starting
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error('the gateway did not start');
}

async function main(): Promise<void> {
  const mock = new MockProviderServer();
  const mockUrl = await mock.listen(0);
  mock.setDefaults({ chunks: 12 });
  const database = await benchDatabase();
  const gateway = await startGateway(mockUrl, database.url);
  const body = (model: string) => JSON.stringify({ model, stream: values.stream, messages: [{ role: 'user', content: 'benchmark prompt' }] });
  const direct: LoadSpec = { url: mockUrl, path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: body('bench-model'), stream: values.stream };
  const through: LoadSpec = {
    url: gateway.url, path: '/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.key}` },
    body: body('bench'), stream: values.stream,
  };
  // Warm up both paths (JIT, connection pools).
  await closedLoop(direct, 8, 1000);
  await closedLoop(through, 8, 2000);

  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(gateway.child.pid!))), 200);
  const results: Record<string, Summary> = {};
  results.closedDirect = summarize(await closedLoop(direct, connections, durationMs), durationMs);
  results.closedSwitchyard = summarize(await closedLoop(through, connections, durationMs), durationMs);
  results.openDirect = summarize(await openLoop(direct, rate, durationMs), durationMs);
  results.openSwitchyard = summarize(await openLoop(through, rate, durationMs), durationMs);
  clearInterval(sampler);

  const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
  const report = {
    at: new Date().toISOString(),
    settings: { durationMs, rate, connections, stream: values.stream, durability: values.durability, eventStore: process.env.DATABASE_URL ? 'postgres' : 'pglite' },
    results,
    gatewayAddedMs: {
      closedP50: Math.round((results.closedSwitchyard.p50 - results.closedDirect.p50) * 1000) / 1000,
      closedP99: Math.round((results.closedSwitchyard.p99 - results.closedDirect.p99) * 1000) / 1000,
      openP50: Math.round((results.openSwitchyard.p50 - results.openDirect.p50) * 1000) / 1000,
      openP99: Math.round((results.openSwitchyard.p99 - results.openDirect.p99) * 1000) / 1000,
      openP999: Math.round((results.openSwitchyard.p999 - results.openDirect.p999) * 1000) / 1000,
    },
    ratiosToBaseline: {
      closedThroughput: ratio(results.closedSwitchyard.rps, results.closedDirect.rps),
      closedP50: ratio(results.closedSwitchyard.p50, results.closedDirect.p50),
      closedP99: ratio(results.closedSwitchyard.p99, results.closedDirect.p99),
      openP50: ratio(results.openSwitchyard.p50, results.openDirect.p50),
      openP99: ratio(results.openSwitchyard.p99, results.openDirect.p99),
      openP999: ratio(results.openSwitchyard.p999, results.openDirect.p999),
    },
    gatewayPeakRssMb: Math.round(peakRss),
  };
  const out = join(here, '..', '..', 'bench', 'results');
  mkdirSync(out, { recursive: true });
  const file = join(out, `${report.at.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\nwritten to ${file}\n`);
  gateway.child.kill('SIGTERM');
  await new Promise((resolve) => gateway.child.once('exit', resolve));
  await database.drop();
  await mock.close();
}

await main();
