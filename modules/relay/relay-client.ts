import type { ClientProxy } from '@nestjs/microservices';
import type { RelayPublishing } from './relay-page.js';
import type { RelaySettings } from './relay-settings.js';

/**
 * What the relay needs of its Nest client proxy (every transport's status type differs, so not the whole class):
 * `publishEvent`, which each of the relay's proxies implements as what `emit` does — connect, then `dispatchEvent` —
 * without the observable pipeline `emit` builds per message (about 40 µs of CPU an event).
 */
export type RelayClientProxy = Pick<ClientProxy, 'close'> & RelayPublishing;

/** How long a publish may wait for the broker's acknowledgement before it counts as unavailable. */
export const RELAY_ACK_TIMEOUT_MS = 10_000;

/**
 * The client proxy of the configured broker. Only that broker's client is loaded: the relay's thread imports
 * nothing else (each module loaded there is parsed and compiled again, in the thread's own heap).
 */
export async function relayClient(settings: Pick<RelaySettings, 'transport' | 'url' | 'servers'>, ackTimeoutMs = RELAY_ACK_TIMEOUT_MS): Promise<RelayClientProxy> {
  switch (settings.transport) {
    case 'nats':
      return new (await import('./jetstream-client.js')).JetStreamClientProxy(settings.url, ackTimeoutMs);
    case 'amqp':
      return new (await import('./rabbitmq-client.js')).RabbitMqClientProxy(settings.url, ackTimeoutMs);
    case 'kafka':
      return new (await import('./kafka-client.js')).KafkaClientProxy(settings.servers, ackTimeoutMs);
  }
}
