/** The observability context's public surface: what the pipeline reports to, the settings, the module and what the bootstrap wires. */
export * from './cluster-metrics.js';
export * from './content-redaction.js';
export * from './gateway-metrics.js';
export * from './observability-settings.js';
export * from './observability.js';
export * from './observability.module.js';
export * from './readiness.js';
export * from './request-observation.js';
