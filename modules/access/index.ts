/** The access context's public surface: tenant, API-key and content-policy aggregates, and the gateway-key authenticator. */
export * from './api-key/api-key.decider.js';
export * from './api-key/key-format.js';
export * from './tenant/tenant.decider.js';
export * from './gateway-authenticator.js';
export * from './tenant/tenant-definition.js';
export * from './api-key/api-key-definition.js';
export * from './content-policy/content-policy.decider.js';
export * from './content-policy/content-policy-reference.js';
export * from './content-policy/content-policy-settings.js';
export * from './content-policy/content-policy-guard.js';
export * from './content-policy/content-policy-definition.js';
export * from './content-policy/content-policy-view.js';
