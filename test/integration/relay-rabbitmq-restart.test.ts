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
 * A RabbitMQ restart under the relay (docs/events-out.md): on a node of the test's own (the shared broker on
 * 5672 cannot be restarted by a test), a durable queue bound to the exchange keeps what was confirmed; the
 * relay rides out the outage with backoff and resumes at its checkpoint. Slow by nature: a RabbitMQ node
 * takes 10–30 s to start here, and this starts one twice.
 */
const baseUrl = requireService('DATABASE_URL');
const describeIf = baseUrl && rabbitMqServerAvailable() ? describe : describe.skip;

describeIf('the relay across a RabbitMQ restart', () => {
  test('events published before, during and after the restart all reach a durable queue, each stream in order', async () => {
    const rabbit = await OwnRabbitMq.start();
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
      await rabbit.close();
    }
  }, 240_000);
});
