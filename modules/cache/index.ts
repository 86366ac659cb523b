/** The cache context's public surface: stored answers (exact cache, idempotent outcomes), their stores, settings and Nest module. */
export * from './cache-settings.js';
export * from './cache.module.js';
export * from './exact-cache.js';
export * from './idempotency-store.js';
export * from './stored-answer.js';
