/** The audit context's public surface: history and audit-export Nest module. */
export * from './audit.module.js';
