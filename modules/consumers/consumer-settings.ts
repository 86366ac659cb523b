import { ConfigurationError, type SettingsEnv, declareSettings, textSetting } from '../../src/kernel/index.js';
import { readRelaySettings } from '../relay/index.js';

export const CONSUMER_ENVIRONMENT = declareSettings('modules/consumers', {
  SWITCHYARD_CONSUME_GROUP: {
    type: 'a name (letters, digits, `-`, `_`)',
    default: '`switchyard-<consumer>` (`switchyard-clickhouse-analytics`)',
    meaning:
      '`switchyard consume`: the consumer group — the JetStream durable consumers `<group>-<EventType>` or the RabbitMQ durable queue `<group>`; ' +
      'processes of one group share the messages, each group gets every message',
  },
});

/** The consumers `switchyard consume NAME` starts. */
export const CONSUMER_NAMES = ['clickhouse-analytics', 'webhooks'] as const;
export type ConsumerName = (typeof CONSUMER_NAMES)[number];

export interface ConsumerSettings {
  name: ConsumerName;
  transport: 'nats' | 'amqp';
  /** SWITCHYARD_RELAY_URL as configured (credentials included: handed to the client, never logged). */
  url: string;
  servers: string[];
  group: string;
}

/** The broker is the relay's (SWITCHYARD_RELAY_URL): a consumer reads what the relay publishes. */
export function readConsumerSettings(name: string, env: SettingsEnv): ConsumerSettings {
  if (!(CONSUMER_NAMES as readonly string[]).includes(name)) {
    throw new ConfigurationError(`switchyard consume: no consumer "${name}" (consumers: ${CONSUMER_NAMES.join(', ')})`);
  }
  const relay = readRelaySettings(env);
  if (!relay) throw new ConfigurationError('switchyard consume needs SWITCHYARD_RELAY_URL: the broker the relay publishes to (docs/events-out.md)');
  if (relay.transport === 'kafka') {
    throw new ConfigurationError('switchyard consume reads NATS JetStream (nats://) or RabbitMQ (amqp://); a Kafka topic is read with your own consumer group');
  }
  const group = textSetting(env, CONSUMER_ENVIRONMENT.SWITCHYARD_CONSUME_GROUP)?.trim() || `switchyard-${name}`;
  // JetStream durable names and queue names: no dots, spaces or wildcards.
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(group)) throw new ConfigurationError(`SWITCHYARD_CONSUME_GROUP "${group}": use letters, digits, "-" and "_" only`);
  return { name: name as ConsumerName, transport: relay.transport, url: relay.url, servers: relay.servers, group };
}
