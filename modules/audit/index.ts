/** The audit context's public surface: history and audit-export Nest module, and the audit trail's settings the bootstrap provides. */
export * from './audit.module.js';
export * from './audit-trail-settings.js';
