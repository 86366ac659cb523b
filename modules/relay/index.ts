/** Events out (docs/events-out.md): the relay that publishes the log to NATS JetStream, RabbitMQ or Kafka, and its settings. */
export * from './relay-settings.js';
export { natsCredentials } from './relay-transport.js';
export { failureReason } from './relay-page.js';
export * from './relay-message.js';
export { type EventView, eventView } from './event-view.js';
export * from './relay.projection.js';
export * from './relay-client.js';
export { JetStreamClientProxy, NATS_STREAM, NATS_SUBJECT_PREFIX, natsSubject } from './jetstream-client.js';
export { RabbitMqClientProxy, RABBITMQ_EXCHANGE } from './rabbitmq-client.js';
export { KafkaClientProxy, KAFKA_PRODUCER, KAFKA_SEND, KAFKA_TOPIC, kafkaRecord, classifyKafkaError } from './kafka-client.js';
