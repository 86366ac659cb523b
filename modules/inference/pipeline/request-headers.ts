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

/** Anthropic beta names (`files-api-2025-04-14`): letters, digits, '.', '_' and '-' only, so none can break a header line. */
const BETA_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const MAX_BETAS = 16;
const MAX_BETA_HEADER_LENGTH = 1024;

/**
 * The caller's `anthropic-beta` header (the Anthropic SDK's `betas`, comma-separated; a repeated header
 * counts as one list): the beta names in order, or null when none was sent. Untrusted and forwarded to
 * upstream headers and bodies, so each name is checked against a strict token alphabet and the list is
 * bounded; anything else is the caller's 400 before any route is chosen.
 */
export function anthropicBetasOf(headers: RequestHeaders): string[] | null {
  const value = headers['anthropic-beta'];
  if (value === undefined) return null;
  const joined = Array.isArray(value) ? value.join(',') : value;
  if (joined.trim() === '') return null;
  const names = joined.length > MAX_BETA_HEADER_LENGTH ? [] : joined.split(',').map((name) => name.trim());
  if (names.length === 0 || names.length > MAX_BETAS || !names.every((name) => BETA_NAME.test(name))) {
    throw new GatewayError(
      400, 'invalid_request',
      `The 'anthropic-beta' header must list 1 to ${MAX_BETAS} beta names separated by commas (at most ${MAX_BETA_HEADER_LENGTH} characters), each 1 to 64 letters, digits, '.', '_' or '-'.`,
      'anthropic-beta',
    );
  }
  return [...new Set(names)];
}
