/** Consumers of the relayed log (`switchyard consume NAME`, docs/events-out.md "Consumers"). */
export { CONSUMER_ENVIRONMENT, CONSUMER_NAMES, readConsumerSettings } from './consumer-settings.js';
export { startConsumer } from './consumer-app.js';
export { NATS_DEAD_LETTER_STREAM, NATS_DEAD_LETTER_SUBJECT_PREFIX } from './jetstream-consumer-server.js';
export type { WebhookDeadLetter } from './webhook-delivery.js';
export { DEFAULT_WEBHOOK_EVENTS, WEBHOOK_ENVIRONMENT, readWebhookSettings } from './webhook-settings.js';
