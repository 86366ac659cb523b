import { type AmqpConnectionManager, type ChannelWrapper, connect } from 'amqp-connection-manager';
import type { Channel, ConsumeMessage } from 'amqplib';
import type { CustomTransportStrategy } from '@nestjs/microservices';
import { RABBITMQ_EXCHANGE, failureReason } from '../relay/index.js';
import { ConsumerServer, redeliveryDelayMs } from './consumer-server.js';
import type { DeadLetterSink, WebhookDeadLetter } from './webhook-delivery.js';

/** Unacknowledged messages a member holds at once. */
const PREFETCH = 32;

/**
 * The relay's topic exchange consumed through one durable queue per group (`<group>`, bound with each
 * handled event type as routing key). Every process of the group consumes the same queue, so RabbitMQ
 * hands each message to one of them (competing consumers) and gives it to another if that one's channel
 * closes before it acknowledged. Manual acknowledgement after the handler resolved; a failure is returned
 * to the queue after a backoff (a nack at once would spin while, say, ClickHouse is down).
 * amqp-connection-manager reconnects and runs the setup again. Nest's ServerRMQ expects Nest's
 * `{pattern, data}` packets, while the relay publishes the bare envelope with the type as routing key.
 */
export class RabbitMqConsumerServer extends ConsumerServer implements CustomTransportStrategy, DeadLetterSink {
  private connection: AmqpConnectionManager | null = null;
  private channel: ChannelWrapper | null = null;
  /** Redeliveries seen per message id in this process (RabbitMQ counts none on classic queues). */
  private readonly failures = new Map<string, number>();
  private closing = false;

  constructor(private readonly url: string, private readonly group: string) {
    super();
  }

  async listen(callback: (error?: unknown) => void): Promise<void> {
    try {
      const types = this.handledTypes();
      this.connection = connect([this.url], { heartbeatIntervalInSeconds: 10, reconnectTimeInSeconds: 1 });
      // The manager retries by itself, start included: say why it waits, once per reason, instead of waiting silently.
      let lastReason: string | null = null;
      this.connection.on('connectFailed', (event: { err?: unknown }) => {
        const reason = failureReason(event?.err ?? event);
        if (reason !== lastReason) this.logger.warn(`cannot reach the RabbitMQ broker at ${brokerHost(this.url)} (SWITCHYARD_RELAY_URL): ${reason}; retrying every second`);
        lastReason = reason;
      });
      this.connection.on('connect', () => {
        if (lastReason !== null) this.logger.log(`connected to the RabbitMQ broker at ${brokerHost(this.url)}`);
        lastReason = null;
      });
      this.channel = this.connection.createChannel({
        json: false,
        setup: async (channel: Channel) => {
          await channel.assertExchange(RABBITMQ_EXCHANGE, 'topic', { durable: true });
          await channel.assertQueue(this.group, { durable: true });
          // Where deliveries that kept failing are recorded (webhooks); declared up front, empty for others.
          await channel.assertQueue(`${this.group}.dead-letters`, { durable: true });
          for (const type of types) await channel.bindQueue(this.group, RABBITMQ_EXCHANGE, type);
          await channel.prefetch(PREFETCH);
          await channel.consume(this.group, (message) => {
            if (message) void this.onMessage(channel, message);
          }, { noAck: false });
        },
      });
      await this.channel.waitForConnect();
      callback();
    } catch (error) {
      callback(error);
    }
  }

  private async onMessage(channel: Channel, message: ConsumeMessage): Promise<void> {
    const id = String(message.properties.messageId ?? message.fields.deliveryTag);
    const outcome = await this.deliver(message.content, `message ${id} of queue ${this.group}`);
    try {
      if (outcome === 'retry') {
        const failures = (this.failures.get(id) ?? 0) + 1;
        this.failures.set(id, failures);
        await new Promise((resolve) => setTimeout(resolve, redeliveryDelayMs(failures)));
        if (!this.closing) channel.nack(message, false, true);
        return;
      }
      this.failures.delete(id);
      if (outcome === 'drop') channel.nack(message, false, false);
      else channel.ack(message);
    } catch {
      // The channel closed meanwhile: the broker returns the message to the queue by itself.
    }
  }

  /** Into the durable queue `<group>.dead-letters` (persistent, `message_id` = `id`), through a publisher confirm. */
  async deadLetter(record: WebhookDeadLetter, id: string): Promise<void> {
    if (!this.channel) throw new Error('not connected');
    await this.channel.sendToQueue(`${this.group}.dead-letters`, Buffer.from(JSON.stringify({ ...record, group: this.group })), { persistent: true, messageId: id, contentType: 'application/json' });
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.channel?.close().catch(() => undefined);
    await this.connection?.close().catch(() => undefined);
  }

  unwrap<T>(): T {
    if (!this.connection) throw new Error('not connected');
    return this.connection as T;
  }
}

/** The broker's host and port as printed: never the user or the password of the URL. */
function brokerHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the configured broker';
  }
}
