/** The analytics context's public surface: spend reports' Nest module. */
export * from './analytics.module.js';
