/**
 * DI tokens for the kernel's values that have no class of their own to inject by. The bootstrap binds
 * them (src/platform.module.ts); modules inject them.
 */
export const DATABASE = Symbol('DATABASE');
