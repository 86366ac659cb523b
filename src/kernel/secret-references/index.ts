/** The kernel's secret references: what a reference may read, how it resolves, and which values are known. */
export { SecretResolutionError, currentSecretReferencePolicy, installSecretReferencePolicy, isSecretRef, resolveSecret } from './secret-reference.js';
export { DEFAULT_SECRET_ENV, type SecretReferencePolicy, SecretPolicyError, secretReferencePolicy } from './secret-reference-policy.js';
export { knownSecretForms, rememberSecret, rememberUrlCredentials } from './known-secrets.js';
