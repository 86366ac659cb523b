/** The inference context's public surface: the data plane's Nest module. */
export * from './inference.module.js';
export * from './inference-settings.js';
export * from './pipeline/durability.js';
export * from './resilience/resilience-settings.js';
export * from './http/http-settings.js';
export { DeploymentHealth } from './resilience/deployment-health.js';
