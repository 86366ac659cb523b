import { AckPolicy, type ConsumerMessages, DeliverPolicy, JetStreamApiError, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { CustomTransportStrategy } from '@nestjs/microservices';
import { NATS_STREAM, NATS_SUBJECT_PREFIX, failureReason } from '../relay/index.js';
import { ConsumerServer, redeliveryDelayMs } from './consumer-server.js';
import type { DeadLetterSink, WebhookDeadLetter } from './webhook-delivery.js';

/** Dead letters of consumers: a stream of their own, so the relay's stream keeps only the log. */
export const NATS_DEAD_LETTER_STREAM = 'SWITCHYARD_DEAD_LETTERS';
export const NATS_DEAD_LETTER_SUBJECT_PREFIX = 'switchyard.dead-letters';

/** Messages a member handles at once, over all its durables (RabbitMQ's prefetch over its queue is the same). */
const IN_FLIGHT = 32;

/** How long JetStream waits for an acknowledgement before delivering a message to another member. */
const ACK_WAIT_MS = 60_000;

/**
 * The relay's JetStream stream consumed through durable pull consumers, one per event type the controllers
 * handle (`<group>-<EventType>` on `switchyard.events.<EventType>`: one filter each works on NATS 2.9,
 * which has no multi-subject filters). Every process started with the same group pulls from the same
 * durables, so JetStream shares their messages among them (competing consumers) and keeps what was not
 * acknowledged for whoever comes next. Explicit acknowledgement after the handler resolved; a failure is
 * negatively acknowledged with a backoff (JetStream delivers it again, here or to another member).
 * Nest's ServerNats is core NATS (no JetStream, no durable consumer, no acknowledgement): hence this strategy.
 */
export class JetStreamConsumerServer extends ConsumerServer implements CustomTransportStrategy, DeadLetterSink {
  private connection: NatsConnection | null = null;
  private readonly subscriptions: ConsumerMessages[] = [];
  private readonly loops: Promise<void>[] = [];
  /** The deliveries this member has in hand, every event type's together (at most IN_FLIGHT). */
  private readonly inHand = new Set<Promise<void>>();

  constructor(private readonly servers: string[], private readonly credentials: { user?: string; pass?: string }, private readonly group: string) {
    super();
  }

  async listen(callback: (error?: unknown) => void): Promise<void> {
    try {
      this.connection = await connect({ servers: this.servers, ...this.credentials, name: this.group, maxReconnectAttempts: -1, reconnectTimeWait: 1_000 }).catch((error: unknown) => {
        // The first connection is not retried: a wrong URL stops the start, saying which broker and which setting.
        throw new Error(`cannot reach the NATS broker at ${this.servers.join(',')} (SWITCHYARD_RELAY_URL): ${failureReason(error)}`, { cause: error });
      });
      const manager = await jetstreamManager(this.connection);
      try {
        await manager.streams.info(NATS_STREAM);
      } catch (error) {
        if (!(error instanceof JetStreamApiError) || error.status !== 404) throw error;
        await manager.streams.add({ name: NATS_STREAM, subjects: [`${NATS_SUBJECT_PREFIX}.>`] });
      }
      const js = jetstream(this.connection);
      for (const type of this.handledTypes()) {
        const durable = `${this.group}-${type}`;
        // Created once; a second member finds it and shares it. The whole stream from the start: the first
        // consumer of a group gets what the relay published before it existed.
        await manager.consumers.add(NATS_STREAM, {
          durable_name: durable, filter_subject: `${NATS_SUBJECT_PREFIX}.${type}`, ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All, ack_wait: ACK_WAIT_MS * 1_000_000, max_ack_pending: 1_000,
        }).catch(async (error: unknown) => {
          // Already there with other settings (an operator's): use it as it is.
          if (!(error instanceof JetStreamApiError)) throw error;
          await manager.consumers.info(NATS_STREAM, durable);
        });
        const messages = await (await js.consumers.get(NATS_STREAM, durable)).consume({ max_messages: 64 });
        this.subscriptions.push(messages);
        this.loops.push((async () => {
          try {
            for await (const message of messages) {
              await this.hold(async () => {
                // A handler may take longer than ack_wait (webhook retries): tell JetStream it is still in hand,
                // or it would give the message to another member meanwhile.
                const working = setInterval(() => message.working(), ACK_WAIT_MS / 3);
                try {
                  const outcome = await this.deliver(message.data, `message ${message.seq} of ${durable}`);
                  if (outcome === 'retry') message.nak(redeliveryDelayMs(message.info.deliveryCount));
                  else if (outcome === 'drop') message.term();
                  else message.ack();
                } catch (error) {
                  // Not acknowledged: JetStream delivers it again after ack_wait.
                  this.logger.error(`message ${message.seq} of ${durable}: ${(error as Error).message}`);
                } finally {
                  clearInterval(working);
                }
              });
            }
          } finally {
            await Promise.allSettled([...this.inHand]);
          }
        })());
      }
      callback();
    } catch (error) {
      callback(error);
    }
  }

  /**
   * Starts `work` once fewer than IN_FLIGHT deliveries are in hand, and returns without waiting for it: up to
   * IN_FLIGHT messages at once over all the member's event types, as RabbitMQ's prefetch over its queue, so one slow
   * delivery (a receiver retried for half a minute) holds no later event back. The check and the start are one
   * synchronous step: loops of several types never pass the limit together.
   */
  private async hold(work: () => Promise<void>): Promise<void> {
    while (this.inHand.size >= IN_FLIGHT) await Promise.race(this.inHand);
    const started: Promise<void> = work().finally(() => this.inHand.delete(started));
    this.inHand.add(started);
  }

  /**
   * Into stream SWITCHYARD_DEAD_LETTERS (created if missing), subject `switchyard.dead-letters.<consumer>`, with the
   * group in the record and in the message id (`<group>:<id>`): the stream de-duplicates a group's retry of the same
   * dead letter, never another group's dead letter for the same event and URL index.
   */
  async deadLetter(record: WebhookDeadLetter, id: string): Promise<void> {
    if (!this.connection) throw new Error('not connected');
    const manager = await jetstreamManager(this.connection);
    try {
      await manager.streams.info(NATS_DEAD_LETTER_STREAM);
    } catch (error) {
      if (!(error instanceof JetStreamApiError) || error.status !== 404) throw error;
      await manager.streams.add({ name: NATS_DEAD_LETTER_STREAM, subjects: [`${NATS_DEAD_LETTER_SUBJECT_PREFIX}.>`] });
    }
    await jetstream(this.connection).publish(`${NATS_DEAD_LETTER_SUBJECT_PREFIX}.${record.consumer}`, JSON.stringify({ ...record, group: this.group }), { msgID: `${this.group}:${id}` });
  }

  async close(): Promise<void> {
    for (const messages of this.subscriptions) messages.stop();
    await Promise.allSettled(this.loops);
    await this.connection?.drain().catch(() => undefined);
  }

  unwrap<T>(): T {
    if (!this.connection) throw new Error('not connected');
    return this.connection as T;
  }
}
