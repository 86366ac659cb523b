/** The console's server side: its module, the security headers every /console answer carries, and its settings. */
export * from './console.module.js';
export * from './console-security-headers.js';
export * from './console-settings.js';
