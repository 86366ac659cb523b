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

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The caller's `Idempotency-Key` (replays, and recorded on RequestAdmitted): untrusted, so bounded. */
export function idempotencyKeyOf(headers: RequestHeaders): string | null {
  const value = firstHeader(headers['idempotency-key']);
  if (value === undefined) return null;
  if (!IDEMPOTENCY_KEY.test(value)) {
    throw new GatewayError(400, 'invalid_request', "The 'Idempotency-Key' header must be 1 to 255 printable ASCII characters without spaces.", 'idempotency-key');
  }
  return value;
}
