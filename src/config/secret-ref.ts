/** Secret references live in the kernel (DESIGN §3); this path stays for code that imports it from here. */
export { SecretResolutionError, isSecretRef, resolveSecret } from '../kernel/secret-references/secret-reference.js';
