import { ClientRMQ, type ReadPacket } from '@nestjs/microservices';
import { type RelayMessage, RelayRefusedError, RelayUnavailableError } from './relay-message.js';

/** The durable topic exchange the relay publishes to; the routing key is the event type. */
export const RABBITMQ_EXCHANGE = 'switchyard.events';

/** What the relay's channel publishes with (`channel.publish` of amqp-connection-manager, whose promise settles on the broker's confirm). */
interface ConfirmChannel {
  publish(exchange: string, routingKey: string, content: Buffer, options: Record<string, unknown>): Promise<boolean>;
}

/**
 * AMQP reply codes with which a broker closes the channel over one message, and would again for the same
 * message: 403 access refused (the user may not publish to the exchange), 406 precondition failed (over
 * `max_message_size`), 311 content too large.
 */
const REFUSAL = /\b(403|406|311)\b|ACCESS[-_]REFUSED|PRECONDITION[-_]FAILED|CONTENT[-_]TOO[-_]LARGE/;

/**
 * Nest's ClientRMQ on a durable topic exchange (its `wildcards` mode: it asserts the exchange and keeps the
 * connection manager that reconnects). Its `emit` publishes Nest's `{pattern, data}` packet and takes no
 * message id; the contract needs the envelope itself as the body, `message_id` = event id, persistent
 * delivery and a publisher confirm before the relay moves on. The channel amqp-connection-manager gives
 * Nest is a confirm channel already, so this subclass overrides `dispatchEvent` alone and awaits the confirm.
 */
export class RabbitMqClientProxy extends ClientRMQ {
  constructor(url: string, private readonly ackTimeoutMs: number) {
    super({
      urls: [url],
      wildcards: true,
      exchange: RABBITMQ_EXCHANGE,
      exchangeType: 'topic',
      persistent: true,
      // amqp-connection-manager retries the connection itself; Nest's socket options pass through.
      socketOptions: { heartbeatIntervalInSeconds: 10, reconnectTimeInSeconds: 1, connectionOptions: { timeout: ackTimeoutMs } },
    });
  }

  protected override async dispatchEvent(packet: ReadPacket<RelayMessage>): Promise<boolean> {
    const message = packet.data;
    const channel = this.channel as ConfirmChannel | null;
    if (!channel) throw new RelayUnavailableError('RabbitMQ', 'no channel');
    try {
      return await channel.publish(RABBITMQ_EXCHANGE, message.type, Buffer.from(message.body), {
        persistent: true,
        messageId: message.eventId,
        type: message.type,
        contentType: 'application/json',
        headers: { 'switchyard-stream-id': message.streamId },
        timeout: this.ackTimeoutMs,
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (REFUSAL.test(reason)) throw new RelayRefusedError('RabbitMQ', message.eventId, reason, { cause: error });
      throw new RelayUnavailableError('RabbitMQ', reason, { cause: error });
    }
  }
}
