/**
 * What a token count in an event is: a non-negative safe integer, never above ATTEMPT_TOKEN_CEILING for
 * one attempt. The provider boundary (modules/canonical/reported-usage.ts) holds every live count to a
 * tighter bound derived from the request; this is the part of the rule that needs no request, which the
 * upcaster applies to events recorded before the boundary existed.
 */

/**
 * No count of one attempt is ever above this, whatever the request: 128 choices of 128k output tokens
 * with as much again for reasoning, or a ten-million-token context, fit well below it.
 */
export const ATTEMPT_TOKEN_CEILING = 2 ** 25;

export function isTokenCount(value: unknown, max: number = ATTEMPT_TOKEN_CEILING): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= max;
}
