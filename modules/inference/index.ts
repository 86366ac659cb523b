/** The inference context's public surface: the data plane's Nest module. */
export * from './inference.module.js';
