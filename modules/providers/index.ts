/** The providers context's public surface: adapters, their registry and pools, the wire types the client formats share, and the Nest module. */
export * from './provider-adapter.js';
export * from './provider-adapters.js';
export * from './upstream-errors.js';
export * from './upstream-pools.js';
export * from './anthropic/anthropic-usage.js';
export * from './anthropic/anthropic-wire.js';
export * from './openai/openai-usage.js';
export * from './openai/openai-wire.js';
export * from './providers.module.js';
export * from './provider-settings.js';
export * from './parameters/parameter-table.js';
export * from './outbound-connector.js';
export * from './parameters/document-support.js';
export * from './webhook-signature.js';
