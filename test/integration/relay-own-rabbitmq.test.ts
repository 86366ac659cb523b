import { Logger } from '@nestjs/common';
import amqp from 'amqplib';
import { RABBITMQ_EXCHANGE, RELAY_PROJECTION, openRelay, readRelaySettings } from '../../modules/relay/index.js';
import { uuidv7 } from '../../src/kernel/ids.js';
import { ProjectionRunner } from '../../src/kernel/projections/projection-runner.js';
import { openStore } from '../support/event-store-targets.js';
import { OwnRabbitMq, rabbitMqServerAvailable } from '../support/own-rabbitmq.js';
import { createScratchDatabase, requireService } from '../support/services.js';

Logger.overrideLogger(['error']);

/**
 * The relay (docs/events-out.md) on a RabbitMQ node of the test's own, for what the shared broker on 5672
 * must not suffer: a restart (a durable queue bound to the exchange keeps what was confirmed; the relay rides
 * out the outage with backoff and resumes at its checkpoint) and a `max_message_size` that makes it refuse a
 * message. Slow by nature: a RabbitMQ node takes 10–30 s to start here, and this suite starts one twice.
 */
const baseUrl = requireService('DATABASE_URL');
/** The node's max_message_size: far above the suite's ordinary events (under 1 KB), below its oversized one. */
const REFUSAL_LIMIT = 8_192;
const describeIf = baseUrl && rabbitMqServerAvailable() ? describe : describe.skip;

describeIf('the relay and a RabbitMQ node of its own', () => {
  let rabbit: OwnRabbitMq;
  beforeAll(async () => {
    rabbit = await OwnRabbitMq.start({ maxMessageSize: REFUSAL_LIMIT });
  }, 120_000);
  afterAll(async () => {
    await rabbit.close();
  });

  test('a restart: events published before, during and after it all reach a durable queue, each stream in order', async () => {
    const scratch = await createScratchDatabase(baseUrl!);
    const fixture = await openStore(scratch.url);
    const relay = openRelay(readRelaySettings({ SWITCHYARD_RELAY_URL: rabbit.url })!, 2_000);
    const runner = new ProjectionRunner(fixture.store, fixture.database, { pollIntervalMs: 200, listen: true, batchSize: 500, runDurable: true });
    runner.addDurable(relay);
    const queue = `relay-restart-${uuidv7().slice(-8)}`;
    const appended = new Map<string, string[]>();
    const append = async (streams: number, perStream: number) => {
      for (let s = 0; s < streams; s++) {
        const streamId = `relaytest-${uuidv7()}`;
        const events = Array.from({ length: perStream }, (_, v) => ({ eventId: uuidv7(), type: 'RelayProbe', data: { n: v + 1 } }));
        await fixture.store.append({ streamId, events, expectedVersion: 'no-stream' });
        appended.set(streamId, events.map((event) => event.eventId));
      }
    };
    const until = async (probe: () => Promise<boolean> | boolean, what: string, timeoutMs = 90_000) => {
      for (const started = Date.now(); !(await probe()); ) {
        if (Date.now() - started > timeoutMs) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    try {
      const setup = await amqp.connect(rabbit.url);
      const channel = await setup.createChannel();
      await channel.assertExchange(RABBITMQ_EXCHANGE, 'topic', { durable: true });
      await channel.assertQueue(queue, { durable: true });
      await channel.bindQueue(queue, RABBITMQ_EXCHANGE, '#');
      await setup.close();

      await append(200, 10);
      await runner.start();
      await until(() => relay.stats.published > 200, 'the relay publishing');
      await rabbit.stop();
      await append(100, 10);
      await until(() => relay.stats.unavailable > 0, 'a failed publish while the broker is down');
      await rabbit.restart();
      const status = () => runner.status().find((s) => s.name === RELAY_PROJECTION)!;
      await until(async () => status().lastError === null && (await runner.lag(1_000_000)).find((lag) => lag.name === RELAY_PROJECTION)?.behind === 0, 'the relay catching up after the restart');

      const consumer = await amqp.connect(rabbit.url);
      const read = await consumer.createChannel();
      const received: Array<{ streamId: string; eventId: string }> = [];
      for (let message = await read.get(queue, { noAck: true }); message; message = await read.get(queue, { noAck: true })) {
        received.push(JSON.parse(message.content.toString()) as { streamId: string; eventId: string });
      }
      await read.deleteQueue(queue);
      await consumer.close();

      const firstSeen = new Map<string, string[]>();
      const seen = new Set<string>();
      for (const envelope of received) {
        if (seen.has(envelope.eventId)) continue; // at least once: a page unconfirmed at the outage is published again
        seen.add(envelope.eventId);
        firstSeen.set(envelope.streamId, [...(firstSeen.get(envelope.streamId) ?? []), envelope.eventId]);
      }
      expect(seen.size).toBe(3_000);
      for (const [streamId, ids] of appended) expect(firstSeen.get(streamId)).toEqual(ids);
    } finally {
      await runner.stop();
      await relay.close();
      await fixture.close();
      await scratch.drop();
    }
  }, 240_000);

  test('a message over max_message_size: the relay stops at that event, with the one before it published and none after', async () => {
    const scratch = await createScratchDatabase(baseUrl!);
    const fixture = await openStore(scratch.url);
    const relay = openRelay(readRelaySettings({ SWITCHYARD_RELAY_URL: rabbit.url })!, 2_000);
    const runner = new ProjectionRunner(fixture.store, fixture.database, { pollIntervalMs: 200, listen: true, batchSize: 500, runDurable: true });
    runner.addDurable(relay);
    const queue = `relay-refusal-${uuidv7().slice(-8)}`;
    try {
      const setup = await amqp.connect(rabbit.url);
      const channel = await setup.createChannel();
      await channel.assertExchange(RABBITMQ_EXCHANGE, 'topic', { durable: true });
      await channel.assertQueue(queue, { durable: true });
      await channel.bindQueue(queue, RABBITMQ_EXCHANGE, '#');
      const ids = [uuidv7(), uuidv7(), uuidv7()];
      await fixture.store.append({
        streamId: `relaytest-refused-${uuidv7()}`, expectedVersion: 'no-stream',
        events: [
          { eventId: ids[0], type: 'RelayProbe', data: { n: 1 } },
          { eventId: ids[1], type: 'RelayProbe', data: { n: 2, padding: 'x'.repeat(2 * REFUSAL_LIMIT) } },
          { eventId: ids[2], type: 'RelayProbe', data: { n: 3 } },
        ],
      });
      await runner.start();
      const status = () => runner.status().find((s) => s.name === RELAY_PROJECTION)!;
      for (const started = Date.now(); status().halted === null; ) {
        if (Date.now() - started > 60_000) throw new Error(`the relay did not halt (last error: ${status().lastError})`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status().halted!.eventId).toBe(ids[1]);
      expect(status().halted!.error).toMatch(/RabbitMQ broker refused event/);
      const bodies: string[] = [];
      for (let message = await channel.get(queue, { noAck: true }); message; message = await channel.get(queue, { noAck: true })) bodies.push(message.content.toString());
      // At least once: the first event may arrive again (the page is published again to find the refused event).
      expect([...new Set(bodies.map((body) => (JSON.parse(body) as { eventId: string }).eventId))]).toEqual([ids[0]]);
      expect(relay.stats.refused).toBeGreaterThan(0);
      await channel.deleteQueue(queue);
      await setup.close();
    } finally {
      await runner.stop();
      await relay.close();
      await fixture.close();
      await scratch.drop();
    }
  }, 120_000);
});
