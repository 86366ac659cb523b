import { JetStreamClientProxy } from './jetstream-client.js';
import { KafkaClientProxy } from './kafka-client.js';
import { RabbitMqClientProxy } from './rabbitmq-client.js';
import { type RelayClientProxy, RelayProjection } from './relay.projection.js';
import type { RelaySettings } from './relay-settings.js';

/** How long a publish may wait for the broker's acknowledgement before it counts as unavailable. */
export const RELAY_ACK_TIMEOUT_MS = 10_000;

/** The client proxy of the configured broker. */
export function relayClient(settings: RelaySettings, ackTimeoutMs = RELAY_ACK_TIMEOUT_MS): RelayClientProxy {
  switch (settings.transport) {
    case 'nats':
      return new JetStreamClientProxy(settings.url, ackTimeoutMs);
    case 'amqp':
      return new RabbitMqClientProxy(settings.url, ackTimeoutMs);
    case 'kafka':
      return new KafkaClientProxy(settings.servers, ackTimeoutMs);
  }
}

/** The relay for SWITCHYARD_RELAY_URL; nothing connects until its first page. */
export function openRelay(settings: RelaySettings, ackTimeoutMs = RELAY_ACK_TIMEOUT_MS): RelayProjection {
  return new RelayProjection(settings.transport, settings.events, relayClient(settings, ackTimeoutMs));
}
