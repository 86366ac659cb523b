/**
 * What a durable projection's pages cost the embedded store (docs/benchmarks.md "What request summaries cost"):
 * a scratch PGlite data directory gets `--requests` requests of three events each (admitted, one attempt,
 * completed), read back in pages of `--page-requests` requests (a page of the serving process covers 100 ms:
 * 170 requests at 1,700 requests/s), and each page is applied as the runner applies it — one transaction — by
 * the projection named. `--in-flight` is the share of a page's requests still running when it is read: their
 * attempt and completion are in the next page (at c=32 a request lasts ~20 ms of a page's 100 ms: about 0.2). It reports the process's CPU per request (every thread: the engine runs on its own)
 * and the wall time per page, after ten pages of warm-up. Reading the log is left out: the durable projections
 * share that read in the serving process.
 *
 *   node dist/bench/projection-pages.js [--projection request-summaries|cost-ledger] [--requests 12000] [--page-requests 170] [--in-flight 0.2]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppendRequest, DurableProjection, RecordedEvent } from '../src/kernel/index.js';
import { CostLedgerProjection } from '../projections/cost-ledger/index.js';
import { RequestSummariesProjection } from '../projections/request-summaries/index.js';
import { migrate, openDataSource } from '../src/kernel/database/data-source.js';
import { openDatabase } from '../src/kernel/database/open-database.js';
import { START } from '../src/kernel/event-store/log-position.js';
import { SqlEventStore } from '../src/kernel/event-store/sql-event-store.js';
import { uuidv7 } from '../src/kernel/ids.js';

const PROJECTIONS: Record<string, () => DurableProjection> = {
  'request-summaries': () => new RequestSummariesProjection(),
  'cost-ledger': () => new CostLedgerProjection(),
};
const WARM_UP_PAGES = 10;

interface Options {
  projection: string;
  requests: number;
  pageRequests: number;
  inFlight: number;
}

function parse(args: readonly string[]): Options {
  const options: Options = { projection: 'request-summaries', requests: 12_000, pageRequests: 170, inFlight: 0 };
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i], args[i + 1]];
    if (flag === '--projection' && value && value in PROJECTIONS) options.projection = value;
    else if (flag === '--requests' && Number(value) > 0) options.requests = Number(value);
    else if (flag === '--page-requests' && Number(value) > 0) options.pageRequests = Number(value);
    else if (flag === '--in-flight' && Number(value) >= 0 && Number(value) < 1) options.inFlight = Number(value);
    else throw new Error(`unknown option or value: ${flag} ${value ?? ''} (--projection ${Object.keys(PROJECTIONS).join('|')}, --requests N, --page-requests N, --in-flight 0…1)`);
  }
  if (options.requests < options.pageRequests * (WARM_UP_PAGES + 5)) throw new Error(`--requests must cover at least ${WARM_UP_PAGES + 5} pages`);
  return options;
}

/** Request n's three events, as the serving path appends them (a tenant of seven, a key of 23, an alias of three). */
function requestStory(n: number): { admission: AppendRequest; rest: AppendRequest } {
  const requestId = `req_${String(n).padStart(8, '0')}${uuidv7().slice(-8)}`;
  const who = { tenantId: `tenant-${n % 7}`, keyId: `key-${n % 23}`, alias: `alias-${n % 3}` };
  const usage = { input: 50, cachedInput: 0, cacheWrite: 0, output: 20, reasoning: 0 };
  const event = (type: string, data: Record<string, unknown>) => ({ eventId: uuidv7(), type, data: { requestId, ...data } });
  const [admitted, attempt, completion] = [
    event('RequestAdmitted', { ...who, aliasVersion: 1, snapshotPosition: 1, clientFormat: 'openai', operation: 'chat', stream: false,
      estimatedInputTokens: 10, reservedOutputTokens: 100, idempotencyKey: null }),
    event('AttemptFinished', { attempt: 1, ...who, deploymentId: 'primary', providerId: 'mock', model: 'm', outcome: 'success', errorClass: null,
      httpStatus: 200, usage, usageEvidence: 'provider', cost: { input: '0.0001', cachedInput: '0', cacheWrite: '0', output: '0.0002', total: '0.0003', currency: 'USD' },
      priceVersion: 1, latencyMs: 12, ttftMs: null, providerRequestId: null, routing: { strategy: 'priority', candidates: ['primary'], reason: 'first' } }),
    event('RequestCompleted', { status: 'success', httpStatus: 200, errorCode: null, fallbackDepth: 0, cacheHit: false,
      totals: { usage, costUsd: '0.0003', attempts: 1, latencyMs: 12 } }),
  ];
  const streamId = `request-${requestId}`;
  return {
    admission: { streamId, expectedVersion: 'no-stream', events: [admitted] },
    rest: { streamId, expectedVersion: 1, events: [attempt, completion] },
  };
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-pages-'));
  const database = await openDatabase({ databaseUrl: null, dataDir });
  const dataSource = await openDataSource(database, null, []);
  try {
    await migrate(database, dataSource);
    const store = new SqlEventStore(database);
    // A page: its requests' admissions, the rest of the ones that finish within it, and the rest of the previous
    // page's requests that were still in flight (the last page takes its own too). Pages are read back as written.
    const sizes: number[] = [];
    let carried: AppendRequest[] = [];
    for (let first = 0; first < options.requests; first += options.pageRequests) {
      const stories = Array.from({ length: Math.min(options.pageRequests, options.requests - first) }, (_, i) => requestStory(first + i));
      const running = first + options.pageRequests >= options.requests ? 0 : Math.round(stories.length * options.inFlight);
      const page = [...stories.map((story) => story.admission), ...stories.slice(running).map((story) => story.rest), ...carried];
      carried = stories.slice(0, running).map((story) => story.rest);
      const failed = (await store.appendMany(page)).find((result) => result instanceof Error);
      if (failed) throw failed;
      sizes.push(page.reduce((sum, append) => sum + append.events.length, 0));
    }
    const pages: RecordedEvent[][] = [];
    let position = START;
    for (const size of sizes) {
      const page = await store.readAll(position, { limit: size });
      if (page.events.length !== size) throw new Error(`read ${page.events.length} events of a page of ${size}`);
      pages.push([...page.events]);
      position = page.next;
    }
    const projection = PROJECTIONS[options.projection]();
    const apply = (events: readonly RecordedEvent[]) => database.transaction((tx) => projection.handle(tx, events));
    for (const page of pages.slice(0, WARM_UP_PAGES)) await apply(page);
    const measured = pages.slice(WARM_UP_PAGES);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (const page of measured) await apply(page);
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const requests = measured.reduce((sum, page) => sum + page.length, 0) / 3;
    console.log(`${options.projection}: ${measured.length} pages of ${options.pageRequests} requests on the embedded store — ` +
      `CPU ${((cpu.user + cpu.system) / requests).toFixed(1)} µs per request (all threads), wall ${(wallMs / measured.length).toFixed(2)} ms per page`);
  } finally {
    await dataSource.destroy().catch(() => undefined);
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
