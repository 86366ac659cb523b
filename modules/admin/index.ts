/** The admin context's public surface: guard and principal, error format, validation pipe, command helper and the shared admin DTOs. */
export * from './admin-error.js';
export * from './admin-exception.filter.js';
export * from './admin-validation.js';
export * from './admin-key-verifier.js';
export * from './admin.guard.js';
export * from './admin-area.js';
export * from './admin-sessions.js';
export * from './admin-principal.js';
export * from './admin-commands.js';
export * from './admin-settings.js';
export * from './admin.module.js';
export * from './reason.dto.js';
export * from './limits-definition.js';
export * from './definition-body.js';
export * from './definition-member.js';
export * from './list-page.js';
export { AdminTokens } from './admin-tokens.js';
