import type { OutgoingEvent } from '@nestjs/microservices';
// The client's own module, not the package's index: the relay's thread loads this transport alone.
import { ClientKafka } from '@nestjs/microservices/client/client-kafka.js';
import type { RelayMessage } from './relay-message.js';
import { RelayRefusedError, RelayUnavailableError } from './relay-message.js';

/** The topic every event goes to; the message key (the stream id) keeps a stream's events in one partition, in order. */
export const KAFKA_TOPIC = 'switchyard.events';

/** One Kafka record of the relay: key = stream id, value = the envelope, headers = type and id. */
export interface KafkaRelayRecord {
  key: string;
  value: string;
  headers: Record<string, string>;
}

export function kafkaRecord(message: RelayMessage): KafkaRelayRecord {
  return {
    key: message.streamId,
    value: message.body,
    headers: { 'switchyard-event-id': message.eventId, 'switchyard-event-type': message.type, 'content-type': 'application/json' },
  };
}

/**
 * The producer settings the contract needs: idempotent (a retried send is written once per partition, in
 * order), which kafkajs allows only with one request in flight and acknowledgements from every in-sync
 * replica (acks = -1) — the relay's checkpoint moves only after that acknowledgement.
 */
export const KAFKA_PRODUCER = { idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: true } as const;
export const KAFKA_SEND = { acks: -1 } as const;

/**
 * kafkajs error types that a retry of the same record meets again: the broker refused it, not the network.
 * Everything else (leader not available, a request timed out, the connection) is transient.
 */
const REFUSED_TYPES = new Set([
  'MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'TOPIC_AUTHORIZATION_FAILED', 'CLUSTER_AUTHORIZATION_FAILED',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED', 'INVALID_TOPIC_EXCEPTION', 'CORRUPT_MESSAGE', 'UNSUPPORTED_VERSION',
]);

/**
 * Nest's ClientKafka as is for the connection (producer only: the relay awaits no replies) with the relay's
 * record mapping as its serializer (Nest's documented extension point), and `dispatchEvent` wrapped only to
 * tell a refusal from an outage. Not exercised against a live broker here: none can be installed on these
 * machines (docs/events-out.md).
 */
export class KafkaClientProxy extends ClientKafka {
  /** `connectRetries`: kafkajs's own retries of a failed connection (its default when unset). */
  constructor(brokers: string[], ackTimeoutMs: number, connectRetries?: number) {
    super({
      client: {
        clientId: 'switchyard-relay', brokers, connectionTimeout: ackTimeoutMs, requestTimeout: ackTimeoutMs,
        ...(connectRetries === undefined ? {} : { retry: { retries: connectRetries } }),
      },
      producer: KAFKA_PRODUCER,
      producerOnlyMode: true,
      send: { ...KAFKA_SEND, timeout: ackTimeoutMs },
      serializer: { serialize: (message: RelayMessage) => kafkaRecord(message) },
    });
  }

  /** The relay's publish: what `emit` does (connect, then dispatchEvent), as a plain promise. */
  async publishEvent(message: RelayMessage): Promise<unknown> {
    await this.connect();
    return this.dispatchEvent({ pattern: message.type, data: message });
  }

  protected override async dispatchEvent(packet: OutgoingEvent): Promise<unknown> {
    const message = packet.data as RelayMessage;
    try {
      return await super.dispatchEvent(packet);
    } catch (error) {
      throw classifyKafkaError(message, error);
    }
  }
}

export function classifyKafkaError(message: Pick<RelayMessage, 'eventId'>, error: unknown): Error {
  const reason = error instanceof Error ? error.message : String(error);
  const type = (error as { type?: unknown } | null)?.type;
  if (typeof type === 'string' && REFUSED_TYPES.has(type)) return new RelayRefusedError('Kafka', message.eventId, `${reason} (${type})`, { cause: error });
  return new RelayUnavailableError('Kafka', reason, { cause: error });
}
