/**
 * Request search pages newest first by (at, request_id): a page token is where the last page ended, as
 * opaque text. `at` keeps the database's microseconds (a Date would round them and skip or repeat rows
 * that share a millisecond).
 */
export interface RequestPageKey {
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ`, UTC. */
  at: string;
  requestId: string;
}

const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const REQUEST_ID = /^[0-9A-Za-z][0-9A-Za-z-]{0,63}$/;

export function encodeRequestPageToken(key: RequestPageKey): string {
  return Buffer.from(`${key.at}|${key.requestId}`, 'utf8').toString('base64url');
}

/** The key a token carries, or null when it is not a token this encoder made. */
export function decodeRequestPageToken(token: string): RequestPageKey | null {
  if (token.length > 200) return null;
  const [at, requestId, ...rest] = Buffer.from(token, 'base64url').toString('utf8').split('|');
  if (rest.length || !AT.test(at ?? '') || !REQUEST_ID.test(requestId ?? '')) return null;
  const key = { at, requestId };
  return encodeRequestPageToken(key) === token ? key : null;
}
