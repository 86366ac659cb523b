import { type Server, createServer } from 'node:net';
import type { Worker } from 'node:worker_threads';
import { Logger, type LoggerService } from '@nestjs/common';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as connectNats } from '@nats-io/transport-node';
import { NATS_STREAM, NATS_SUBJECT_PREFIX, RelayRefusedError, RelayUnavailableError } from '../../modules/relay/index.js';
import { RelayThread } from '../../modules/relay/relay-thread.js';
import { RelayProjection, RelayUnserializableError } from '../../modules/relay/index.js';
import { classifyFailure, thrownByProjection } from '../../src/kernel/projections/projection-failure.js';
import { uuidv7 } from '../../src/kernel/ids.js';
import type { RecordedEvent } from '../../src/kernel/index.js';
import { eventView } from '../../modules/relay/index.js';
import { OwnNats, natsServerAvailable } from '../support/own-nats.js';

/**
 * The relay's publishing thread (modules/relay/relay-thread.ts) against a NATS JetStream server of the suite's
 * own: a page crosses and is stored, a refusal and an outage come back as the errors the relay acts on, the
 * client's log lines reach the process's logger, and a thread that closes or dies mid-page fails that page as
 * unavailable (published again from the checkpoint) and leaves the next page to a new thread.
 */
const describeWithNats = natsServerAvailable() ? describe : describe.skip;
const TIMEOUT = 60_000;

/** Every line the process's Nest logger gets, with its context. */
class CapturingLogger implements LoggerService {
  readonly lines: { level: string; context: string; message: string }[] = [];
  log(message: unknown, context?: string): void { this.lines.push({ level: 'log', context: context ?? '', message: String(message) }); }
  error(message: unknown, ...params: unknown[]): void { this.lines.push({ level: 'error', context: String(params[params.length - 1] ?? ''), message: String(message) }); }
  warn(message: unknown, context?: string): void { this.lines.push({ level: 'warn', context: context ?? '', message: String(message) }); }
}

/** A page of events (what the relay hands its thread), interleaved across streams as concurrent requests write them. */
function messages(streams: number, perStream: number, data: (stream: number) => Record<string, unknown> = () => ({ n: 1 })): RecordedEvent[] {
  const out: RecordedEvent[] = [];
  const run = uuidv7().slice(-8);
  for (let v = 0; v < perStream; v++) {
    for (let s = 0; s < streams; s++) {
      const payload = data(s);
      out.push({
        globalPosition: out.length + 1, transactionId: BigInt(out.length + 1) as RecordedEvent['transactionId'], streamId: `thread-${run}-${s}`, streamVersion: v + 1,
        eventId: uuidv7(), type: 'RelayProbe', schemaVersion: 1, recordedAt: new Date(), data: payload,
        metadata: { actor: 'test', tenantId: null } as unknown as RecordedEvent['metadata'],
        stored: { schemaVersion: 1, data: payload, recordedAt: '2026-12-07T00:00:00.000000Z' },
      });
    }
  }
  return out;
}

async function lastBody(url: string, type: string): Promise<string> {
  const connection = await connectNats({ servers: url });
  try {
    const manager = await jetstreamManager(connection);
    return new TextDecoder().decode((await manager.streams.getMessage(NATS_STREAM, { last_by_subj: `${NATS_SUBJECT_PREFIX}.${type}` }))!.data);
  } finally {
    await connection.close();
  }
}

async function stored(url: string): Promise<number> {
  const connection = await connectNats({ servers: url });
  try {
    return (await (await jetstreamManager(connection)).streams.info(NATS_STREAM)).state.messages;
  } finally {
    await connection.close();
  }
}

describeWithNats('the relay publishing thread', () => {
  let nats: OwnNats;
  let logger: CapturingLogger;
  beforeAll(async () => {
    nats = await OwnNats.start();
  }, TIMEOUT);
  afterAll(async () => {
    await nats.close();
  });
  beforeEach(() => {
    logger = new CapturingLogger();
    Logger.overrideLogger(logger);
  });

  test('a page crosses to the thread, is stored whole, and comes back as a count', async () => {
    const thread = new RelayThread({ settings: { transport: 'nats', url: nats.url, servers: [`127.0.0.1:${nats.port}`] }, ackTimeoutMs: 5_000 });
    try {
      const before = await stored(nats.url).catch(() => 0);
      const page = messages(25, 4);
      const outcome = await thread.publish(page);
      expect(outcome).toEqual({ published: 100, failure: null });
      expect(await stored(nats.url)).toBe(before + 100);
      // Serialized on the thread, the body is the event's view as this thread serializes it, byte for byte.
      // (Streams go out concurrently: the last one stored is one of the page's last events, byte for byte.)
      expect(page.map((event) => JSON.stringify(eventView(event)))).toContain(await lastBody(nats.url, 'RelayProbe'));
      // The same page again: the stream drops the duplicates by Nats-Msg-Id and still acknowledges each one.
      expect(await thread.publish(page)).toEqual({ published: 100, failure: null });
      expect(await stored(nats.url)).toBe(before + 100);
    } finally {
      await thread.close();
    }
  }, TIMEOUT);

  test('a refused message comes back as RelayRefusedError naming its event, an outage as RelayUnavailableError; the client\'s log lines reach this logger', async () => {
    const own = await OwnNats.start();
    const connection = await connectNats({ servers: own.url });
    await (await jetstreamManager(connection)).streams.add({ name: NATS_STREAM, subjects: [`${NATS_SUBJECT_PREFIX}.>`], max_msg_size: 1_024 });
    await connection.close();
    const thread = new RelayThread({ settings: { transport: 'nats', url: own.url, servers: [`127.0.0.1:${own.port}`] }, ackTimeoutMs: 1_500 });
    try {
      const page = messages(3, 2, (stream) => (stream === 1 ? { big: 'x'.repeat(4_000) } : { n: 1 }));
      const refused = await thread.publish(page);
      expect(refused.failure).toBeInstanceOf(RelayRefusedError);
      // The first of stream 1's events is refused; its second is never published (per-stream order).
      expect((refused.failure as RelayRefusedError).eventId).toBe(page[1].eventId);
      expect((refused.failure as RelayRefusedError).reason).toMatch(/maximum/i);
      expect(refused.published).toBe(4);

      await own.stop();
      const down = await thread.publish(messages(2, 1));
      expect(down.failure).toBeInstanceOf(RelayUnavailableError);
      expect(down.published).toBe(0);
      // Logged on the thread by Nest's ClientNats, logged here by the process's logger with its context.
      await waitFor(() => logger.lines.some((line) => line.context === 'ClientNats' && /disconnect/.test(line.message)), 'the client\'s disconnect line');

      await own.restart();
      const again = messages(2, 2);
      await waitFor(async () => (await thread.publish(again)).failure === null, 'a publish after the broker came back');
    } finally {
      await thread.close();
      await own.close();
    }
  }, TIMEOUT);

  test('an event that cannot cross to the thread, or cannot be serialized there, halts the relay at it instead of being retried as an outage', async () => {
    const thread = new RelayThread({ settings: { transport: 'nats', url: nats.url, servers: [`127.0.0.1:${nats.port}`] }, ackTimeoutMs: 5_000 });
    const relay = new RelayProjection('nats', [], thread);
    try {
      // Nested deeper than a structured clone goes (JSON from the log never is): the page never leaves this thread.
      let deep: unknown = 1;
      for (let i = 0; i < 6_000; i++) deep = [deep];
      const tooDeep = await relay.prepare(messages(1, 1, () => ({ deep }))).then(() => null, (error: unknown) => error);
      // (The clone's own RangeError, from Node's realm, not the test's: compared by name.)
      expect((tooDeep as Error).name).toBe('RangeError');
      expect(tooDeep).not.toBeInstanceOf(RelayUnavailableError);
      // As the runner sees it (commitPage marks what prepare throws): deterministic, so it isolates the event and halts.
      expect(classifyFailure(relay, thrownByProjection(tooDeep))).toBe('deterministic');

      // A value that crosses but does not serialize: the thread names the event and publishes nothing of the page.
      const before = await stored(nats.url).catch(() => 0);
      const page = messages(2, 1, (stream) => (stream === 1 ? { tokens: 7n } : { n: 1 }));
      const unserializable = await relay.prepare(page).then(() => null, (error: unknown) => error);
      expect(unserializable).toBeInstanceOf(RelayUnserializableError);
      expect((unserializable as Error).message).toContain(page[1].eventId);
      expect(classifyFailure(relay, thrownByProjection(unserializable))).toBe('deterministic');
      expect(await stored(nats.url).catch(() => 0)).toBe(before);
      expect(relay.stats).toMatchObject({ published: 0, unavailable: 0 });

      // The relay is not backing off: the next page publishes at once.
      await relay.prepare(messages(2, 2));
      expect(relay.stats.published).toBe(4);
    } finally {
      await relay.close();
    }
  }, TIMEOUT);

  test('closing while a page waits fails the page as unavailable at once; a publish after it is refused', async () => {
    // A server that accepts connections and never answers: the client waits for its INFO, the page for the client.
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const thread = new RelayThread({ settings: { transport: 'nats', url: `nats://127.0.0.1:${port}`, servers: [`127.0.0.1:${port}`] }, ackTimeoutMs: 50_000 });
    try {
      const waiting = thread.publish(messages(1, 1)).then(() => null, (error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const started = Date.now();
      const closing = thread.close();
      expect(thread.close()).toBe(closing); // a second close waits for the same end
      await closing;
      expect(await waiting).toBeInstanceOf(RelayUnavailableError);
      expect(Date.now() - started).toBeLessThan(6_000);
      await expect(thread.publish(messages(1, 1))).rejects.toThrow(/closed/);
    } finally {
      silent.close();
    }
  }, TIMEOUT);

  test('a thread that dies mid-page fails the page as unavailable, and the next page goes through a new thread', async () => {
    const thread = new RelayThread({ settings: { transport: 'nats', url: nats.url, servers: [`127.0.0.1:${nats.port}`] }, ackTimeoutMs: 5_000 });
    try {
      expect((await thread.publish(messages(2, 2))).failure).toBeNull();
      // The thread's worker, stopped from outside as a crash would stop it (nothing public kills it).
      const worker = (thread as unknown as { worker: Worker }).worker;
      const inFlight = thread.publish(messages(50, 4)).then(() => null, (error: unknown) => error);
      await worker.terminate();
      const failure = await inFlight;
      expect(failure).toBeInstanceOf(RelayUnavailableError);
      expect((failure as Error).message).toMatch(/publishing thread exited/);
      expect(logger.lines.some((line) => line.level === 'warn' && /publishing thread exited/.test(line.message))).toBe(true);
      const next = await thread.publish(messages(3, 3));
      expect(next).toEqual({ published: 9, failure: null });
      expect((thread as unknown as { worker: Worker }).worker).not.toBe(worker);
    } finally {
      await thread.close();
    }
  }, TIMEOUT);
});

async function waitFor(probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  for (const started = Date.now(); !(await probe()); ) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
