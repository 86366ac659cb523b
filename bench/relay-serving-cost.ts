/**
 * What the relay costs the thread its projection runs on — the serving thread on the embedded default
 * (docs/events-out.md "Throughput"): the relay projection's `prepare` and `handle` applied to pages of events as
 * the runner applies them, publishing to a NATS JetStream server of the bench's own (or `--url`), in two ways, in
 * alternating rounds: `thread` (as the gateway runs it: the client on the relay's thread) and `inline` (the client
 * on the calling thread, as before that thread existed). For each it reports CPU per event of the calling thread
 * alone (its /proc task entry), of the whole process (every thread) and of the NATS server, after ten pages of
 * warm-up. A request writes three to four events.
 *
 *   node dist/bench/relay-serving-cost.js [--requests 30000] [--page-requests 170] [--rounds 3] [--url nats://host:4222]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RELAY_ACK_TIMEOUT_MS, RelayProjection, type RelayPublisher, eventView, readRelaySettings, relayClient, relayMessage } from '../modules/relay/index.js';
import { pageFailure, publishPage } from '../modules/relay/relay-page.js';
import { RelayThread } from '../modules/relay/relay-thread.js';
import type { PublishedPage } from '../modules/relay/relay-thread.js';
import type { RecordedEvent, SqlExecutor } from '../src/kernel/index.js';
import { uuidv7 } from '../src/kernel/ids.js';
import { clockTicksPerSecond, readMainThreadStat, readStat } from './measure/proc.js';
import { defaultResultsDir } from './paths.js';
import { startBenchNatsServer } from './processes/bench-nats-server.js';

type Mode = 'thread' | 'inline';
const WARM_UP_PAGES = 10;

interface Options { requests: number; pageRequests: number; rounds: number; url: string | null }

function parse(args: readonly string[]): Options {
  const options: Options = { requests: 30_000, pageRequests: 170, rounds: 3, url: null };
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i], args[i + 1]];
    if (flag === '--requests' && Number(value) > 0) options.requests = Number(value);
    else if (flag === '--page-requests' && Number(value) > 0) options.pageRequests = Number(value);
    else if (flag === '--rounds' && Number(value) > 0) options.rounds = Number(value);
    else if (flag === '--url' && value?.startsWith('nats://')) options.url = value;
    else throw new Error(`unknown option or value: ${flag} ${value ?? ''} (--requests N, --page-requests N, --rounds N, --url nats://host:port)`);
  }
  if (options.requests < options.pageRequests * (WARM_UP_PAGES + 5)) throw new Error(`--requests must cover at least ${WARM_UP_PAGES + 5} pages`);
  return options;
}

/** The client on the calling thread: what the relay did before its thread existed. */
class InlinePublisher implements RelayPublisher {
  private readonly client;
  constructor(url: string) {
    this.client = relayClient(readRelaySettings({ SWITCHYARD_RELAY_URL: url })!, RELAY_ACK_TIMEOUT_MS);
  }

  async publish(events: Parameters<RelayPublisher['publish']>[0]): Promise<PublishedPage> {
    const { published, failures } = await publishPage(await this.client, events.map((event) => relayMessage(eventView(event))));
    return { published, failure: pageFailure(failures, 'NATS') };
  }

  async close(): Promise<void> {
    await (await this.client).close();
  }
}

/** A request's three events as the serving path writes them (sizes alike: envelopes of 450–650 bytes). */
function requestEvents(n: number, position: { next: number }): RecordedEvent[] {
  const requestId = `req_${String(n).padStart(8, '0')}${uuidv7().slice(-8)}`;
  const streamId = `request-${requestId}`;
  const who = { tenantId: `tenant-${n % 7}`, keyId: `key-${n % 23}`, alias: `alias-${n % 3}` };
  const usage = { input: 50, cachedInput: 0, cacheWrite: 0, output: 20, reasoning: 0 };
  const metadata = { correlationId: requestId, causationId: null, actor: `key:${who.keyId}`, tenantId: who.tenantId };
  const story: Array<[string, Record<string, unknown>]> = [
    ['RequestAdmitted', { requestId, ...who, aliasVersion: 1, snapshotPosition: 1, clientFormat: 'openai', operation: 'chat', stream: false, estimatedInputTokens: 10, reservedOutputTokens: 100, idempotencyKey: null }],
    ['AttemptFinished', { requestId, attempt: 1, deploymentId: 'primary', providerId: 'mock', model: 'model-primary', outcome: 'success', status: 200, latencyMs: 41, firstByteMs: 12, usage, costUsd: '0.000021500000', priceVersion: 1 }],
    ['RequestCompleted', { requestId, outcome: 'success', attempts: 1, usage, costUsd: '0.000021500000', durationMs: 44 }],
  ];
  return story.map(([type, data], version) => ({
    globalPosition: position.next++, transactionId: BigInt(position.next), streamId, streamVersion: version + 1,
    eventId: uuidv7(), type, schemaVersion: 1, data, metadata: metadata as unknown as RecordedEvent['metadata'], recordedAt: new Date(),
    // As the store's reads return them: the stored form beside the payload (the same object: nothing upcast).
    stored: { schemaVersion: 1, data, recordedAt: '2026-12-07T00:00:00.000000Z' },
  }));
}

interface Measured { mode: Mode; events: number; callingThreadUsPerEvent: number; processUsPerEvent: number; brokerUsPerEvent: number | null; msPerPage: number }

async function measure(mode: Mode, url: string, brokerPid: number | null, options: Options): Promise<Measured> {
  const publisher: RelayPublisher = mode === 'thread' ? new RelayThread({ settings: { transport: 'nats', url, servers: [new URL(url).host] }, ackTimeoutMs: RELAY_ACK_TIMEOUT_MS }) : new InlinePublisher(url);
  const relay = new RelayProjection('nats', [], publisher);
  const position = { next: 1 };
  const pages: RecordedEvent[][] = [];
  for (let n = 0; n < options.requests; n += options.pageRequests) {
    pages.push(Array.from({ length: Math.min(options.pageRequests, options.requests - n) }, (_, i) => requestEvents(n + i, position)).flat());
  }
  const apply = async (page: RecordedEvent[]) => {
    await relay.prepare(page);
    await relay.handle(null as unknown as SqlExecutor, page);
  };
  try {
    for (const page of pages.slice(0, WARM_UP_PAGES)) await apply(page);
    const ticks = clockTicksPerSecond();
    const threadBefore = readMainThreadStat(process.pid)!.cpuTicks;
    const brokerBefore = brokerPid ? readStat(brokerPid)?.cpuTicks ?? null : null;
    const processBefore = process.cpuUsage();
    const started = performance.now();
    const measured = pages.slice(WARM_UP_PAGES);
    for (const page of measured) await apply(page);
    const wallMs = performance.now() - started;
    const processUsed = process.cpuUsage(processBefore);
    const threadTicks = readMainThreadStat(process.pid)!.cpuTicks - threadBefore;
    const brokerAfter = brokerPid ? readStat(brokerPid)?.cpuTicks ?? null : null;
    const events = measured.reduce((sum, page) => sum + page.length, 0);
    const perEvent = (us: number) => Math.round((us / events) * 100) / 100;
    return {
      mode, events,
      callingThreadUsPerEvent: perEvent((threadTicks * 1e6) / ticks),
      processUsPerEvent: perEvent(processUsed.user + processUsed.system),
      brokerUsPerEvent: brokerBefore !== null && brokerAfter !== null ? perEvent(((brokerAfter - brokerBefore) * 1e6) / ticks) : null,
      msPerPage: Math.round((wallMs / measured.length) * 100) / 100,
    };
  } finally {
    await relay.close();
  }
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const nats = options.url ? null : await startBenchNatsServer();
  const url = options.url ?? nats!.url;
  const results: Measured[] = [];
  try {
    process.stdout.write(`relay serving cost: ${options.requests} requests of 3 events in pages of ${options.pageRequests}, ${options.rounds} rounds, to ${url}\n`);
    process.stdout.write('| round | mode | calling thread µs/event | process µs/event | NATS server µs/event | ms/page |\n|---|---|---|---|---|---|\n');
    for (let round = 1; round <= options.rounds; round++) {
      const order: Mode[] = round % 2 === 1 ? ['inline', 'thread'] : ['thread', 'inline'];
      for (const mode of order) {
        const result = await measure(mode, url, nats?.pid ?? null, options);
        results.push(result);
        process.stdout.write(`| ${round} | ${mode} | ${result.callingThreadUsPerEvent} | ${result.processUsPerEvent} | ${result.brokerUsPerEvent ?? '–'} | ${result.msPerPage} |\n`);
      }
    }
  } finally {
    nats?.stop();
  }
  const at = new Date().toISOString();
  mkdirSync(defaultResultsDir, { recursive: true });
  const file = join(defaultResultsDir, `relay-serving-cost-${at.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify({ at, options: { ...options, url: url.replace(/\/\/[^@]*@/, '//') }, results }, null, 2)}\n`);
  process.stdout.write(`${file}\n`);
}

main().then(() => process.exit(0), (error: Error) => {
  process.stderr.write(`relay serving cost bench failed: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
