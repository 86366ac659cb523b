/** The catalog's public surface: the provider, deployment, price and alias aggregates and the outbound address policy. */
export * from './provider/provider.decider.js';
export * from './provider/outbound-address-policy.js';
export * from './deployment/deployment.decider.js';
export * from './price/price.decider.js';
export * from './alias/alias.decider.js';
