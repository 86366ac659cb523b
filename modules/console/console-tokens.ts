/** DI token of the console's state store (sessions, pending sign-ins, attempt counts). */
export const CONSOLE_STATE_STORE = Symbol('CONSOLE_STATE_STORE');
/** DI token of the console's Redis connection, or null without REDIS_URL. */
export const CONSOLE_REDIS = Symbol('CONSOLE_REDIS');
