/**
 * The relay bench (docs/events-out.md, docs/benchmarks.md): events appended at a fixed rate (default 3,000
 * a second) into a scratch PostgreSQL database while `switchyard projector` publishes them to a NATS
 * JetStream server of the bench's own (or `--url`). It reports the rate the broker received, the relay's lag
 * (events committed but not yet acknowledged, sampled every 250 ms) during the load, and how long it took to
 * catch up afterwards. Needs DATABASE_URL and `nats-server` (or --url). Run compiled: `npm run bench:relay`.
 *
 * What it does not measure: the serving path's overhead with the relay on; the main runner's `-relay` variants
 * do (bench/runner.ts), and bench/relay-serving-cost.ts measures what the relay costs the serving thread.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as connectNats } from '@nats-io/transport-node';
import pg from 'pg';
import { NATS_STREAM } from '../modules/relay/index.js';
import { migrate, openDataSource } from '../src/kernel/database/data-source.js';
import { openDatabase } from '../src/kernel/database/open-database.js';
import { uuidv7 } from '../src/kernel/ids.js';
import { SqlEventStore } from '../src/kernel/event-store/sql-event-store.js';
import { defaultResultsDir, gatewayMain } from './paths.js';
import { startBenchNatsServer } from './processes/bench-nats-server.js';

interface Options { rate: number; seconds: number; url: string | null }

function parse(argv: string[]): Options {
  const options: Options = { rate: 3_000, seconds: 20, url: null };
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--rate') options.rate = Number(value);
    else if (flag === '--seconds') options.seconds = Number(value);
    else if (flag === '--url') options.url = value;
    else throw new Error(`unknown option ${flag} (--rate N, --seconds N, --url nats://host:port)`);
    i++;
  }
  if (!(options.rate > 0) || !(options.seconds > 0)) throw new Error('--rate and --seconds must be positive numbers');
  return options;
}

/** A request's four events, about the size of real ones (the envelope is ~500 bytes). */
function requestEvents(): Array<{ eventId: string; type: string; data: Record<string, unknown> }> {
  const common = { tenantId: 'acme', keyId: 'bench-key', alias: 'chat', deploymentId: 'primary', providerId: 'mock-upstream', model: 'model-primary' };
  return ['Admitted', 'AttemptStarted', 'AttemptDone', 'Completed'].map((step, i) => ({
    eventId: uuidv7(), type: 'RelayBenchEvent', data: { step, attempt: i, ...common, usage: { input: 812, output: 256 }, costUsd: '0.004602500', latencyMs: 41 },
  }));
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) throw new Error('the relay bench needs DATABASE_URL (PostgreSQL: the relay runs in `switchyard projector`)');
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  let sampling = true;
  try {
    let url = options.url;
    if (!url) {
      const nats = await startBenchNatsServer();
      cleanups.unshift(() => nats.stop());
      url = nats.url;
    }
    const name = `relay_bench_${uuidv7().slice(-12).replace(/-/g, '')}`;
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const dbUrl = new URL(baseUrl);
    dbUrl.pathname = `/${name}`;
    cleanups.unshift(async () => {
      const client = new pg.Client({ connectionString: baseUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    });
    const database = await openDatabase({ databaseUrl: dbUrl.toString(), dataDir: null });
    const dataSource = await openDataSource(database, dbUrl.toString(), []);
    await migrate(database, dataSource);
    cleanups.unshift(async () => (await dataSource.destroy(), await database.close()));
    const store = new SqlEventStore(database);

    const projector: ChildProcess = spawn(process.execPath, [gatewayMain, 'projector'], {
      env: { ...process.env, DATABASE_URL: dbUrl.toString(), SWITCHYARD_RELAY_URL: url, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'inherit', 'inherit'],
    });
    cleanups.unshift(() => new Promise((resolve) => (projector.once('exit', resolve), projector.kill('SIGTERM'))));
    const nc = await connectNats({ servers: url.replace(/^nats:\/\//, '') });
    cleanups.unshift(() => nc.close());
    const manager = await jetstreamManager(nc);
    const received = async () => (await manager.streams.info(NATS_STREAM).catch(() => null))?.state.messages ?? 0;
    const lag = async () => {
      // Events after the relay's checkpoint in the log's order (transaction id, then position: a checkpoint at the
      // head may stand at a transaction id with position 0).
      const rows = await database.query<{ lag: string }>(
        `SELECT count(*) AS lag FROM events e WHERE NOT EXISTS (
           SELECT 1 FROM projection_checkpoints c WHERE c.name = 'relay'
             AND (e.transaction_id < c.transaction_id OR (e.transaction_id = c.transaction_id AND e.global_position <= c.global_position)))`,
      );
      return Number(rows[0].lag);
    };
    // The projector is up when its relay has created the stream (on its first page).
    await store.appendMany([{ streamId: `bench-${uuidv7()}`, events: requestEvents(), expectedVersion: 'no-stream' }]);
    for (const started = Date.now(); (await received()) < 4; ) {
      if (Date.now() - started > 60_000) throw new Error('the projector did not start publishing');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const baseline = await received();

    process.stdout.write(`relay bench: ${options.rate} events/s for ${options.seconds} s to ${url.replace(/\/\/[^@]*@/, '//')}\n`);
    const lags: number[] = [];
    let appended = 0;
    const sampler = (async () => {
      while (sampling) {
        lags.push(await lag());
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    const started = performance.now();
    const end = started + options.seconds * 1000;
    const inFlight = new Set<Promise<unknown>>();
    while (performance.now() < end) {
      const due = Math.floor(((performance.now() - started) / 1000) * options.rate) - appended;
      const requests = Math.floor(due / 4);
      if (requests > 0) {
        const batch = Array.from({ length: requests }, () => ({ streamId: `request-${uuidv7()}`, events: requestEvents(), expectedVersion: 'no-stream' as const }));
        appended += requests * 4;
        const append = store.appendMany(batch);
        inFlight.add(append);
        void append.finally(() => inFlight.delete(append));
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await Promise.all(inFlight);
    const loadSeconds = (performance.now() - started) / 1000;
    const receivedDuringLoad = (await received()) - baseline;
    const caughtUpStarted = performance.now();
    let lastReport = performance.now();
    while ((await lag()) > 0 || (await received()) - baseline < appended) {
      if (performance.now() - caughtUpStarted > 120_000) throw new Error('the relay did not catch up within 120 s of the load ending');
      if (performance.now() - lastReport > 5_000) {
        lastReport = performance.now();
        process.stdout.write(`  catching up: ${await lag()} events behind, ${(await received()) - baseline} of ${appended} received\n`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const catchUpMs = performance.now() - caughtUpStarted;
    sampling = false;
    await sampler;
    const totalSeconds = (performance.now() - started) / 1000;
    const result = {
      at: new Date().toISOString(), offeredEventsPerSecond: options.rate, seconds: options.seconds,
      appended, appendedPerSecond: Math.round(appended / loadSeconds),
      receivedDuringLoadPerSecond: Math.round(receivedDuringLoad / loadSeconds),
      receivedPerSecondIncludingCatchUp: Math.round(appended / totalSeconds),
      lagEvents: { p50: percentile(lags, 50), p95: percentile(lags, 95), max: Math.max(0, ...lags) },
      catchUpMsAfterLoad: Math.round(catchUpMs),
      note: 'relay in `switchyard projector` (with the other durable projections), NATS JetStream, PostgreSQL; the appender runs in the bench process on the same machine',
    };
    mkdirSync(defaultResultsDir, { recursive: true });
    const file = join(defaultResultsDir, `relay-${result.at.replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(
      `appended ${result.appendedPerSecond}/s; broker received ${result.receivedDuringLoadPerSecond}/s during the load; ` +
        `lag p50 ${result.lagEvents.p50}, p95 ${result.lagEvents.p95}, max ${result.lagEvents.max} events; caught up ${result.catchUpMsAfterLoad} ms after the load\n${file}\n`,
    );
  } catch (error) {
    sampling = false;
    process.stderr.write(`relay bench failed: ${(error as Error).stack}\n`);
    process.exitCode = 1;
  } finally {
    for (const cleanup of cleanups) await Promise.resolve(cleanup()).catch(() => undefined);
  }
}

main().then(() => process.exit(0), (error: Error) => {
  process.stderr.write(`relay bench failed: ${error.message}\n`);
  process.exit(1);
});
