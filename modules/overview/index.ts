/** The overview's public surface: its Nest module. */
export * from './overview.module.js';
