/** The limits context's public surface: node admission, per-deployment concurrency and their Nest module. */
export * from './admission-settings.js';
export * from './admission-control.js';
export * from './deployment-concurrency.js';
export * from './permit.js';
export * from './limits.module.js';
export * from './limits-settings.js';
export * from './limits-redis.js';
export * from './rate-limit/rate-limiter.js';
export * from './rate-limit/rate-limit-scopes.js';
export * from './budget/budget-guard.js';
export * from './budget/budget-refusal.js';
export * from './limit-setting.js';
export * from './shared-concurrency.js';
export { postWebhook, type WebhookTarget } from './budget/webhook-post.js';
