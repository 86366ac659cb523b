/** Consumers of the relayed log (`switchyard consume NAME`, docs/events-out.md "Consumers"). */
export { CONSUMER_ENVIRONMENT, CONSUMER_NAMES, readConsumerSettings } from './consumer-settings.js';
export { startConsumer } from './consumer-app.js';
