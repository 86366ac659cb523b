/**
 * When request events must be durable (DESIGN §7):
 * - default: terminal events committed before the last byte reaches the client; RequestAdmitted does not
 *   hold up dispatch.
 * - strict: additionally, RequestAdmitted is committed before the first provider call.
 * - async: nothing waits for the database. A crash can lose the events of requests finished in the last
 *   group-commit window (a few milliseconds), including their billing.
 */
export type DurabilityProfile = 'default' | 'strict' | 'async';

export const DURABILITY_PROFILES: readonly DurabilityProfile[] = ['default', 'strict', 'async'];
