import { AdminApiError } from './admin-error.js';

/** The ids every admin list is keyed by (tenants, keys, aliases, deployments, providers, content policies). */
const LISTED_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

export const MAX_LIST_PAGE = 500;

/**
 * What `?limit=&pageToken=` on an admin list asked for. `limit` null is the whole list (the CLI and API
 * clients that predate paging read lists whole); `after` is the id the previous page ended with.
 */
export interface ListPageRequest {
  limit: number | null;
  after: string | null;
}

export interface ListPageOptions {
  /** The largest `limit` the route accepts (500 unless the route documented a larger one before paging). */
  maxLimit?: number;
  /** The page size without `limit`; null answers the whole list. */
  defaultLimit?: number | null;
}

/** A page token is the last id of a page as opaque text: clients hand it back, they do not build it. */
export function encodeListPageToken(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

/** The id a token carries, or null when it is not a token this encoder made. */
export function decodeListPageToken(token: string): string | null {
  if (token.length > 300) return null;
  const id = Buffer.from(token, 'base64url').toString('utf8');
  return LISTED_ID.test(id) && encodeListPageToken(id) === token ? id : null;
}

/**
 * Reads `limit` and `pageToken` as the query carried them (strings, or an array when repeated). A bad one
 * is a 400 naming the parameter, thrown before the route reads or computes anything.
 */
export function readListPage(limit: unknown, pageToken: unknown, options: ListPageOptions = {}): ListPageRequest {
  const maxLimit = options.maxLimit ?? MAX_LIST_PAGE;
  let size = options.defaultLimit ?? null;
  if (limit !== undefined) {
    if (typeof limit !== 'string' || !/^\d{1,6}$/.test(limit) || Number(limit) < 1 || Number(limit) > maxLimit) {
      throw queryProblem('limit', `must be an integer from 1 to ${maxLimit}`);
    }
    size = Number(limit);
  }
  let after: string | null = null;
  if (pageToken !== undefined) {
    after = typeof pageToken === 'string' ? decodeListPageToken(pageToken) : null;
    if (after === null) throw queryProblem('pageToken', 'must be the nextPageToken of a previous page of this list');
  }
  return { limit: size, after };
}

/**
 * One page of a list keyed by id: ids in code-unit order, those after the token's, at most `limit` of
 * them. `nextPageToken` is null when nothing follows the page.
 */
export function pageOfIds(ids: Iterable<string>, request: ListPageRequest): { ids: string[]; nextPageToken: string | null } {
  const after = request.after;
  const sorted = [...ids].filter((id) => after === null || id > after).sort(byCodeUnits);
  if (request.limit === null || sorted.length <= request.limit) return { ids: sorted, nextPageToken: null };
  const page = sorted.slice(0, request.limit);
  return { ids: page, nextPageToken: encodeListPageToken(page.at(-1)!) };
}

export function queryProblem(parameter: string, message: string): AdminApiError {
  return new AdminApiError(400, 'validation_failed', `The query is invalid: ${parameter}: ${message}.`, [{ path: parameter, message }]);
}

/** The order `id > after` pages by: plain code units, the same for every locale. */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
