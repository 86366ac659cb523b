import type { ReadPacket } from '@nestjs/microservices';
// The client's own module, not the package's index: the relay's thread loads this transport alone.
import { ClientRMQ } from '@nestjs/microservices/client/client-rmq.js';
import { type RelayMessage, RelayRefusedError, RelayUnavailableError } from './relay-message.js';
import { failureReason } from './relay-page.js';

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
  /**
   * The last error the broker closed the channel with. A refused message closes the channel (406 over
   * `max_message_size`, 403 not permitted); the publishes in flight are then rejected with a bare "channel
   * closed", and the reason travels only as an `error` event.
   */
  private channelClosedWith: { error: Error; at: number } | null = null;

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

  /**
   * Nest's connect() answers "Connection lost" at once while the manager reconnects (after a broker restart,
   * or after the broker closed the channel over a refused message); a publish waits for the reconnection up
   * to the acknowledgement timeout instead of failing at once, so the relay's retry of a page right after a
   * refusal (to find the refused event) meets a connection.
   */
  override async connect(): Promise<unknown> {
    const deadline = Date.now() + this.ackTimeoutMs;
    for (;;) {
      try {
        return await super.connect();
      } catch (error) {
        if (Date.now() >= deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /**
   * A channel the broker closes over a message takes the connection down with it here (the manager's
   * `disconnect` event carries the broker's reason, e.g. 406 over `max_message_size`): that is where the
   * reason can be read. The manager reconnects by itself.
   */
  override registerDisconnectListener(client: { addListener(event: 'disconnect', listener: (event: { err?: Error }) => void): unknown }): void {
    super.registerDisconnectListener(client);
    client.addListener('disconnect', (event) => {
      if (event?.err) this.channelClosedWith = { error: event.err, at: Date.now() };
    });
  }

  /** The relay's publish: what `emit` does (connect, then dispatchEvent), as a plain promise. */
  async publishEvent(message: RelayMessage): Promise<unknown> {
    await this.connect();
    return this.dispatchEvent({ pattern: message.type, data: message });
  }

  protected override async dispatchEvent(packet: ReadPacket<RelayMessage>): Promise<boolean> {
    const message = packet.data;
    const channel = this.channel as ConfirmChannel | null;
    if (!channel) throw new RelayUnavailableError('RabbitMQ', 'no channel');
    const sent = Date.now();
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
      let reason = failureReason(error);
      const closed = this.channelClosedWith;
      // Every publish in flight when the channel closed gets the refusal; the relay's runner then narrows it
      // down to the one event the broker refuses on its own (the others go through when tried apart).
      if (/channel closed/i.test(reason) && closed && closed.at >= sent) reason = closed.error.message;
      if (REFUSAL.test(reason)) throw new RelayRefusedError('RabbitMQ', message.eventId, reason, { cause: error });
      throw new RelayUnavailableError('RabbitMQ', reason, { cause: error });
    }
  }
}
