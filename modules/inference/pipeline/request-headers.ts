import { firstHeader, GatewayError, type HeaderMap } from '../../canonical/index.js';

export type RequestHeaders = HeaderMap;

const SESSION_ID = /^[\x20-\x7e]{1,256}$/;

/** The caller's `x-session-id` (sticky routing, canary assignment): untrusted, so bounded. */
export function sessionIdOf(headers: RequestHeaders): string | null {
  const value = firstHeader(headers['x-session-id']);
  if (value === undefined || value === '') return null;
  if (!SESSION_ID.test(value)) {
    throw new GatewayError(400, 'invalid_request', "The 'x-session-id' header must be 1 to 256 printable ASCII characters.", 'x-session-id');
  }
  return value;
}

/** The caller's `Idempotency-Key`, recorded on RequestAdmitted. */
export function idempotencyKeyOf(headers: RequestHeaders): string | null {
  return firstHeader(headers['idempotency-key']) ?? null;
}
