export * from './event.js';
export * from './provider-events.js';
export * from './deployment-events.js';
export * from './price-events.js';
export * from './alias-events.js';
export * from './tenant-events.js';
export * from './api-key-events.js';
export * from './content-policy-events.js';
// What each control-plane family's events amount to: the state its decider decides on and the projections fold.
export * from './provider-state.js';
export * from './deployment-state.js';
export * from './price-state.js';
export * from './alias-state.js';
export * from './tenant-state.js';
export * from './api-key-state.js';
export * from './content-policy-state.js';
export * from './request-events.js';
export * from './breaker-events.js';
export * from './admin-token-events.js';
export * from './console-session-events.js';
export * from './configuration-events.js';
export * from './configuration-state.js';
export * from './switchyard-event.js';
export * from './token-counts.js';
export { upcasters, UpcasterRegistry } from './upcasters.js';

import { ADMIN_TOKEN_EVENT_TYPES } from './admin-token-events.js';
import { ALIAS_EVENT_TYPES } from './alias-events.js';
import { CONSOLE_SESSION_EVENT_TYPES } from './console-session-events.js';
import { CONTENT_POLICY_EVENT_TYPES } from './content-policy-events.js';
import { CONFIGURATION_EVENT_TYPES } from './configuration-events.js';
import { API_KEY_EVENT_TYPES } from './api-key-events.js';
import { DEPLOYMENT_EVENT_TYPES } from './deployment-events.js';
import { PRICE_EVENT_TYPES } from './price-events.js';
import { PROVIDER_EVENT_TYPES } from './provider-events.js';
import { TENANT_EVENT_TYPES } from './tenant-events.js';

/** Every control-plane event type: what the per-node projections subscribe to. */
export const CONTROL_PLANE_EVENT_TYPES: readonly string[] = [
  ...PROVIDER_EVENT_TYPES, ...DEPLOYMENT_EVENT_TYPES, ...PRICE_EVENT_TYPES, ...ALIAS_EVENT_TYPES,
  ...TENANT_EVENT_TYPES, ...API_KEY_EVENT_TYPES, ...CONTENT_POLICY_EVENT_TYPES,
];

/**
 * What the control-plane audit lists: every catalog and access change, the admin token's resets, the runtime
 * edits a configuration file adopted, and who signed in to (or was refused by) the console.
 */
export const AUDITED_EVENT_TYPES: readonly string[] = [...CONTROL_PLANE_EVENT_TYPES, ...ADMIN_TOKEN_EVENT_TYPES, ...CONFIGURATION_EVENT_TYPES, ...CONSOLE_SESSION_EVENT_TYPES];
