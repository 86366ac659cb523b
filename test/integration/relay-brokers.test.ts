import { type ChildProcess, spawn } from 'node:child_process';
import { Logger } from '@nestjs/common';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { type NatsConnection, connect as connectNats } from '@nats-io/transport-node';
import amqp from 'amqplib';
import {
  NATS_STREAM, NATS_SUBJECT_PREFIX, RABBITMQ_EXCHANGE, RELAY_PROJECTION, type RelayProjection, openRelay, readRelaySettings,
} from '../../modules/relay/index.js';
import { RabbitMqClientProxy } from '../../modules/relay/rabbitmq-client.js';
import { pageFailure, publishPage } from '../../modules/relay/relay-page.js';
import type { RelayMessage } from '../../modules/relay/relay-message.js';
import { uuidv7 } from '../../src/kernel/ids.js';
import { ProjectionRunner } from '../../src/kernel/projections/projection-runner.js';
import { MAIN } from '../support/cli-process.js';
import { type StoreFixture, openStore } from '../support/event-store-targets.js';
import { OwnNats } from '../support/own-nats.js';
import { createScratchDatabase, requireService } from '../support/services.js';

Logger.overrideLogger(['error']);

/**
 * The relay (docs/events-out.md) against live brokers: the shared NATS JetStream on 4222 and RabbitMQ on
 * 5672, and a NATS server of the suite's own for what the shared one must not suffer (a restart, a stream
 * with a size limit, a relay process killed mid-publish). Events are appended through the event store
 * directly (10,000 in a few seconds), then read back from the broker and checked: every event, each
 * stream's in order, bodies equal to the history API's event view.
 */
const baseUrl = requireService('DATABASE_URL');
const describeWithPostgres = baseUrl ? describe : describe.skip;
const SHARED_NATS = 'nats://127.0.0.1:4222';
const SHARED_RABBITMQ = 'amqp://guest:guest@127.0.0.1:5672';
const TIMEOUT = 120_000;

interface Envelope {
  globalPosition: number; streamId: string; streamVersion: number; eventId: string; type: string; schemaVersion: number;
  recordedAt: string; data: Record<string, unknown>; metadata: Record<string, unknown>;
}

/** `streams` streams of `perStream` events each, appended one stream at a time; returns the event ids in order per stream. */
async function appendEvents(fixture: StoreFixture, streams: number, perStream: number, payload: (stream: number, version: number) => Record<string, unknown> = () => ({})): Promise<Map<string, string[]>> {
  const appended = new Map<string, string[]>();
  const run = uuidv7().slice(-8);
  const one = async (s: number) => {
    const streamId = `relaytest-${run}-${s}`;
    const events = Array.from({ length: perStream }, (_, v) => ({ eventId: uuidv7(), type: 'RelayProbe', data: { n: v + 1, ...payload(s, v + 1) } }));
    await fixture.store.append({ streamId, events, expectedVersion: 'no-stream' });
    appended.set(streamId, events.map((event) => event.eventId));
  };
  for (let s = 0; s < streams; s += 20) await Promise.all(Array.from({ length: Math.min(20, streams - s) }, (_, i) => one(s + i)));
  return appended;
}

/** Every appended event arrived, and each stream's first arrivals are in its order (duplicates allowed: at least once). */
function expectCompleteAndOrdered(appended: Map<string, string[]>, received: Envelope[]): void {
  const firstSeen = new Map<string, string[]>();
  const seen = new Set<string>();
  for (const envelope of received) {
    if (!appended.has(envelope.streamId) || seen.has(envelope.eventId)) continue;
    seen.add(envelope.eventId);
    firstSeen.set(envelope.streamId, [...(firstSeen.get(envelope.streamId) ?? []), envelope.eventId]);
  }
  const expected = [...appended.values()].reduce((sum, ids) => sum + ids.length, 0);
  expect(seen.size).toBe(expected);
  for (const [streamId, ids] of appended) expect(firstSeen.get(streamId)).toEqual(ids);
}

function relayRunner(fixture: StoreFixture, url: string, ackTimeoutMs = 10_000): { runner: ProjectionRunner; relay: RelayProjection } {
  const relay = openRelay(readRelaySettings({ SWITCHYARD_RELAY_URL: url })!, ackTimeoutMs);
  const runner = new ProjectionRunner(fixture.store, fixture.database, { pollIntervalMs: 200, listen: true, batchSize: 500, runDurable: true });
  runner.addDurable(relay);
  return { runner, relay };
}

async function until(probe: () => Promise<boolean> | boolean, what: string, timeoutMs = 60_000): Promise<void> {
  for (const started = Date.now(); !(await probe()); ) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Everything the stream holds, through an ordered consumer (the stream's order is the publish order). */
async function readStream(connection: NatsConnection, count: number, timeoutMs = 60_000): Promise<Envelope[]> {
  const consumer = await jetstream(connection).consumers.get(NATS_STREAM);
  const messages = await consumer.consume();
  const received: Envelope[] = [];
  const timer = setTimeout(() => void messages.close(), timeoutMs);
  for await (const message of messages) {
    received.push(message.json<Envelope>());
    expect(message.headers?.get('Nats-Msg-Id')).toBe(received[received.length - 1].eventId);
    if (received.length >= count) break;
  }
  clearTimeout(timer);
  await messages.close();
  return received;
}

async function stored(connection: NatsConnection): Promise<number> {
  const manager = await jetstreamManager(connection);
  return (await manager.streams.info(NATS_STREAM)).state.messages;
}

async function dropStream(connection: NatsConnection): Promise<void> {
  const manager = await jetstreamManager(connection);
  await manager.streams.delete(NATS_STREAM).catch(() => undefined);
}

describeWithPostgres('the relay against live brokers', () => {
  let scratch: { url: string; drop: () => Promise<void> };
  beforeEach(async () => {
    scratch = await createScratchDatabase(baseUrl!);
  });
  afterEach(async () => {
    await scratch.drop();
  });

  test('NATS JetStream (shared, 4222): 10,000 events arrive complete, per stream in order, as the event view with Nats-Msg-Id', async () => {
    const nats = await connectNats({ servers: SHARED_NATS });
    const fixture = await openStore(scratch.url);
    await dropStream(nats); // the contract's stream name: this suite's run owns it for its duration
    const { runner, relay } = relayRunner(fixture, SHARED_NATS);
    try {
      const appended = await appendEvents(fixture, 1_000, 10);
      await runner.start();
      await runner.catchUp([RELAY_PROJECTION], 60_000);
      expect(relay.stats.published).toBeGreaterThanOrEqual(10_000);
      const received = await readStream(nats, 10_000);
      expectCompleteAndOrdered(appended, received);
      const sample = received[received.length - 1];
      expect(Object.keys(sample)).toEqual(['globalPosition', 'streamId', 'streamVersion', 'eventId', 'type', 'schemaVersion', 'recordedAt', 'data', 'metadata']);
      const [row] = await fixture.database.query<{ data: unknown; stream_version: number }>(`SELECT data, stream_version FROM events WHERE event_id = $1`, [sample.eventId]);
      expect(sample.data).toEqual(row.data);
      expect(sample.streamVersion).toBe(row.stream_version);
      // The checkpoint stands at the log's end; publishing again (a restart from an older checkpoint) is de-duplicated by the stream.
      expect(await stored(nats)).toBe(10_000);
    } finally {
      await runner.stop();
      await relay.close();
      await fixture.close();
      await dropStream(nats);
      await nats.close();
    }
  }, TIMEOUT);

  test('RabbitMQ: a wrong password or vhost is an outage whose log line says why (the broker\'s words), never the URL or the password', async () => {
    for (const [url, reason] of [
      ['amqp://guest:not-the-password@127.0.0.1:5672', /ACCESS_REFUSED - Login was refused/],
      ['amqp://guest:guest@127.0.0.1:5672/no-such-vhost', /ConnectionClose|vhost|NOT_ALLOWED/i],
    ] as const) {
      const client = new RabbitMqClientProxy(url, 1500);
      try {
        const message = { type: 'RelayProbe', eventId: uuidv7(), streamId: 'probe-1', body: '{}' } as unknown as RelayMessage;
        const failure = pageFailure((await publishPage(client, [message])).failures, 'RabbitMQ');
        expect(failure?.name).toBe('RelayUnavailableError');
        expect(failure?.message).toMatch(reason);
        expect(failure?.message).not.toMatch(/object Object|not-the-password|amqp:/);
      } finally {
        await client.close().catch(() => undefined);
      }
    }
  }, 30_000);

  test('RabbitMQ (shared, 5672): 10,000 events arrive complete and in order on a queue bound to the topic exchange, persistent, message_id = event id', async () => {
    const connection = await amqp.connect(SHARED_RABBITMQ);
    const channel = await connection.createChannel();
    await channel.assertExchange(RABBITMQ_EXCHANGE, 'topic', { durable: true });
    // A queue of this run's own: other bindings on the exchange get their copies and are not disturbed.
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    await channel.bindQueue(queue, RABBITMQ_EXCHANGE, 'RelayProbe');
    const fixture = await openStore(scratch.url);
    const { runner, relay } = relayRunner(fixture, SHARED_RABBITMQ);
    const received: Envelope[] = [];
    const properties: amqp.MessageProperties[] = [];
    await channel.consume(queue, (message) => {
      if (!message) return;
      received.push(JSON.parse(message.content.toString()) as Envelope);
      properties.push(message.properties);
    }, { noAck: true });
    try {
      const appended = await appendEvents(fixture, 1_000, 10);
      await runner.start();
      await runner.catchUp([RELAY_PROJECTION], 60_000);
      await until(() => received.length >= 10_000, 'every message reaching the queue');
      expectCompleteAndOrdered(appended, received);
      expect(properties.every((p, i) => p.messageId === received[i].eventId && p.deliveryMode === 2 && p.type === 'RelayProbe')).toBe(true);
    } finally {
      await runner.stop();
      await relay.close();
      await fixture.close();
      await connection.close();
    }
  }, TIMEOUT);

  describe('with a NATS server of its own', () => {
    let nats: OwnNats;
    beforeAll(async () => {
      nats = await OwnNats.start();
    });
    afterAll(async () => {
      await nats.close();
    });
    afterEach(async () => {
      await nats.restart().catch(() => undefined);
      const connection = await connectNats({ servers: nats.url });
      await dropStream(connection);
      await connection.close();
    });

    test('broker down at start and restarted mid-stream: the relay backs off, reports its failure, and resumes at its checkpoint; nothing is lost', async () => {
      await nats.stop();
      const fixture = await openStore(scratch.url);
      const { runner, relay } = relayRunner(fixture, nats.url, 2_000);
      try {
        const first = await appendEvents(fixture, 100, 10);
        await runner.start();
        await until(() => relay.stats.unavailable > 0, 'a failed publish');
        const status = () => runner.status().find((s) => s.name === RELAY_PROJECTION)!;
        expect(status().lastError).toMatch(/NATS broker is unavailable/);
        expect(status().lastGlobalPosition).toBe(0);
        expect((await runner.lag(1_000_000)).find((lag) => lag.name === RELAY_PROJECTION)?.behind).toBe(1_000);

        await nats.restart();
        await until(() => status().lastError === null && relay.stats.published >= 1_000, 'publishing after the broker came up');
        // Mid-stream: more events, the broker restarted while they go out.
        const second = await appendEvents(fixture, 300, 10);
        await until(() => relay.stats.published > 1_500, 'part of the second batch published', 30_000);
        await nats.stop();
        await nats.restart();
        const connection = await connectNats({ servers: nats.url });
        // The relay comes back by itself (backoff), without a wake-up from the test.
        await until(async () => (await stored(connection).catch(() => 0)) >= 4_000 && status().lastError === null, 'the relay catching up after the restart', 90_000);
        const received = await readStream(connection, 4_000);
        await connection.close();
        expectCompleteAndOrdered(new Map([...first, ...second]), received);
      } finally {
        await runner.stop();
        await relay.close();
        await fixture.close();
      }
    }, TIMEOUT);

    test('a message the broker refuses stops the relay at that event, named, with everything before it published and nothing after', async () => {
      const connection = await connectNats({ servers: nats.url });
      const manager = await jetstreamManager(connection);
      // An operator's stream with a size limit: the relay leaves an existing stream as it is.
      await manager.streams.add({ name: NATS_STREAM, subjects: [`${NATS_SUBJECT_PREFIX}.>`], max_msg_size: 2_048 });
      const fixture = await openStore(scratch.url);
      const { runner, relay } = relayRunner(fixture, nats.url, 2_000);
      try {
        // One stream: a small event, one over the limit, a small one; the relay must publish the first and stop at the second.
        const streamId = `relaytest-refused-${uuidv7().slice(-8)}`;
        const ids = [uuidv7(), uuidv7(), uuidv7()];
        await fixture.store.append({
          streamId, expectedVersion: 'no-stream',
          events: [
            { eventId: ids[0], type: 'RelayProbe', data: { n: 1 } },
            { eventId: ids[1], type: 'RelayProbe', data: { n: 2, padding: 'x'.repeat(4_096) } },
            { eventId: ids[2], type: 'RelayProbe', data: { n: 3 } },
          ],
        });
        const [big] = await fixture.database.query<{ global_position: string }>(`SELECT global_position FROM events WHERE event_id = $1`, [ids[1]]);
        const errors: string[] = [];
        const quiet = () => undefined;
        Logger.overrideLogger({ log: quiet, warn: quiet, debug: quiet, verbose: quiet, fatal: quiet, error: (message: unknown) => errors.push(String(message)) });
        await runner.start();
        const status = () => runner.status().find((s) => s.name === RELAY_PROJECTION)!;
        await until(() => status().halted !== null, 'the relay halting');
        const halt = status().halted!;
        expect(halt.eventId).toBe(ids[1]);
        expect(halt.error).toMatch(/NATS broker refused event .*message size exceeds maximum allowed/);
        expect(relay.stats.refused).toBeGreaterThan(0);
        // The halt's log line says what fixes a relay's halt (the broker's limit), not a projection's of the database.
        const halted = errors.find((line) => line.startsWith(`${RELAY_PROJECTION} halted`) || line.includes('Every event before it is applied'));
        expect(halted).toContain("raise the limit the message went over, or grant the relay's user the permission it lacks");
        expect(halted).not.toContain('upcaster');
        // The refusal is logged once, however many parts of the page the runner tried to find the event.
        expect(errors.filter((line) => line.includes('broker refused a message'))).toHaveLength(1);
        // The checkpoint stands just before the refused event: it is never skipped.
        expect(status().lastGlobalPosition).toBeLessThan(Number(big.global_position));
        const received = await readStream(connection, 1);
        expect(received.map((envelope) => envelope.eventId)).toEqual([ids[0]]);
        expect(await stored(connection)).toBe(1);
        // It stays stopped: events appended later do not go out on later wake-ups either.
        await appendEvents(fixture, 3, 2);
        runner.wake();
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect(await stored(connection)).toBe(1);
        expect(status().halted?.eventId).toBe(ids[1]);
      } finally {
        Logger.overrideLogger(['error']);
        await runner.stop();
        await relay.close();
        await fixture.close();
        await connection.close();
      }
    }, TIMEOUT);

    test('two nodes with the relay: one publishes (the lease), the other stands by and takes over when the first stops; every event arrives', async () => {
      const nodes = [await openStore(scratch.url), await openStore(scratch.url)];
      const relays = nodes.map((fixture) => relayRunner(fixture, nats.url, 2_000));
      const connection = await connectNats({ servers: nats.url });
      try {
        const first = await appendEvents(nodes[0], 100, 5);
        await relays[0].runner.start();
        await relays[0].runner.catchUp([RELAY_PROJECTION], 60_000);
        await relays[1].runner.start();
        const second = await appendEvents(nodes[1], 100, 5);
        await until(async () => (await stored(connection)) >= 1_000, 'the second batch published');
        expect(relays.map(({ runner }) => runner.status().find((s) => s.name === RELAY_PROJECTION)!.leaseHeld)).toEqual([true, false]);
        expect(relays[1].relay.stats.published).toBe(0);
        await relays[0].runner.stop();
        const third = await appendEvents(nodes[1], 100, 5);
        await until(async () => (await stored(connection)) >= 1_500, 'the standby taking over', 30_000);
        expect(relays[1].relay.stats.published).toBeGreaterThanOrEqual(500);
        expectCompleteAndOrdered(new Map([...first, ...second, ...third]), await readStream(connection, 1_500));
      } finally {
        for (const { runner, relay } of relays) {
          await runner.stop();
          await relay.close();
        }
        for (const fixture of nodes) await fixture.close();
        await connection.close();
      }
    }, TIMEOUT);

    test('kill -9 of a `switchyard projector` running the relay mid-publish: a new one resumes from the checkpoint and nothing is lost', async () => {
      const fixture = await openStore(scratch.url);
      const appended = await appendEvents(fixture, 1_000, 10);
      await fixture.close();
      const env = { ...process.env, DATABASE_URL: scratch.url, SWITCHYARD_RELAY_URL: nats.url, LOG_LEVEL: 'error' };
      const projector = (): ChildProcess => spawn(process.execPath, [MAIN, 'projector'], { env, stdio: 'ignore' });
      const connection = await connectNats({ servers: nats.url });
      const first = projector();
      try {
        await until(async () => (await stored(connection).catch(() => 0)) > 2_000, 'the first projector publishing');
        first.kill('SIGKILL');
        await new Promise((resolve) => first.once('exit', resolve));
        const published = await stored(connection);
        expect(published).toBeLessThan(10_000);
        // Events after the relay's stored checkpoint, in the log's order.
        const behind = async () => {
          const store = await openStore(scratch.url);
          try {
            const [row] = await store.database.query<{ behind: string }>(
              `SELECT count(*) AS behind FROM events e WHERE NOT EXISTS (SELECT 1 FROM projection_checkpoints c WHERE c.name = 'relay'
                 AND (e.transaction_id < c.transaction_id OR (e.transaction_id = c.transaction_id AND e.global_position <= c.global_position)))`,
            );
            return Number(row.behind);
          } finally {
            await store.close();
          }
        };
        // The killed relay had checkpointed part of the log (only what the broker acknowledged): the next one starts there, not at zero.
        const left = await behind();
        expect(left).toBeLessThan(10_000);
        expect(10_000 - left).toBeLessThanOrEqual(published);
        const second = projector();
        try {
          await until(async () => (await stored(connection)) >= 10_000 && (await behind()) === 0, 'the second projector finishing', 90_000);
        } finally {
          second.kill('SIGTERM');
          await new Promise((resolve) => second.once('exit', resolve));
        }
        const received = await readStream(connection, 10_000);
        expectCompleteAndOrdered(appended, received);
      } finally {
        if (first.exitCode === null) first.kill('SIGKILL');
        await connection.close();
      }
    }, TIMEOUT);
  });
});
