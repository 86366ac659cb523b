import { Inject, Injectable } from '@nestjs/common';
import { Decimal } from 'decimal.js';
import { type RequestSummaryStatus } from '../../projections/request-summaries/index.js';
import { type Database, DATABASE } from '../../src/kernel/index.js';
import { PageTokenError } from './page-token.js';
import { decodeRequestPageToken, encodeRequestPageToken } from './request-page-token.js';

export interface RequestSearchQuery {
  /** Confined by the caller: a tenant admin's own tenant, always. */
  tenantId?: string;
  keyId?: string;
  alias?: string;
  status?: RequestSummaryStatus;
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to?: Date;
  limit: number;
  pageToken?: string;
}

/** One request as the search lists it (the whole story is `GET /admin/v1/requests/{id}`). */
export interface RequestListing {
  requestId: string;
  at: string;
  tenantId: string | null;
  keyId: string | null;
  alias: string | null;
  operation: string | null;
  status: RequestSummaryStatus;
  httpStatus: number | null;
  errorCode: string | null;
  cacheHit: boolean;
  attempts: number;
  latencyMs: number | null;
  inputTokens: number;
  outputTokens: number;
  costUsd: string;
}

export interface RequestPage {
  requests: RequestListing[];
  /** null on the last page. */
  nextPageToken: string | null;
}

interface SummaryRow {
  request_id: string;
  at_key: string;
  tenant_id: string | null;
  key_id: string | null;
  alias: string | null;
  operation: string | null;
  status: RequestSummaryStatus;
  http_status: number | null;
  error_code: string | null;
  cache_hit: boolean;
  attempts: number;
  latency_ms: number | null;
  input_tokens: string;
  output_tokens: string;
  cost_usd: string;
}

/**
 * `GET /admin/v1/requests` and `switchyard requests list`: requests newest first from `request_summaries`,
 * filtered by tenant, key, alias, status and time, in keyset pages. Tenant, key and alias each have an index
 * ending in (at, request_id), so a page reads `limit + 1` index entries from where the token points, at any
 * depth, and no page counts the table. Status has none (five values: migration 1764979200501): alone it is
 * a filter on the newest-first scan of (at, request_id), otherwise a filter on the other column's index.
 */
@Injectable()
export class RequestSearch {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async page(query: RequestSearchQuery): Promise<RequestPage> {
    const params: unknown[] = [];
    const where: string[] = [];
    const equal = (column: string, value: string | undefined) => {
      if (value === undefined) return;
      params.push(value);
      where.push(`${column} = $${params.length}`);
    };
    equal('tenant_id', query.tenantId);
    equal('key_id', query.keyId);
    equal('alias', query.alias);
    equal('status', query.status);
    if (query.from) {
      params.push(query.from.toISOString());
      where.push(`at >= $${params.length}::timestamptz`);
    }
    if (query.to) {
      params.push(query.to.toISOString());
      where.push(`at < $${params.length}::timestamptz`);
    }
    if (query.pageToken !== undefined) {
      const key = decodeRequestPageToken(query.pageToken);
      if (!key) throw new PageTokenError('pageToken is not a token from a previous answer');
      params.push(key.at, key.requestId);
      where.push(`(at, request_id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(query.limit + 1);
    const rows = await this.database.query<SummaryRow>(
      `SELECT request_id, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at_key, tenant_id, key_id, alias, operation,
              status, http_status, error_code, cache_hit, attempts, latency_ms, input_tokens::text AS input_tokens,
              output_tokens::text AS output_tokens, cost_usd::text AS cost_usd
       FROM request_summaries ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY at DESC, request_id DESC LIMIT $${params.length}`,
      params,
    );
    const more = rows.length > query.limit;
    const shown = more ? rows.slice(0, query.limit) : rows;
    const last = shown[shown.length - 1];
    return {
      requests: shown.map(listing),
      nextPageToken: more && last ? encodeRequestPageToken({ at: last.at_key, requestId: last.request_id }) : null,
    };
  }
}

function listing(row: SummaryRow): RequestListing {
  return {
    requestId: row.request_id,
    // Milliseconds, as every other time the admin API answers.
    at: new Date(row.at_key).toISOString(),
    tenantId: row.tenant_id,
    keyId: row.key_id,
    alias: row.alias,
    operation: row.operation,
    status: row.status,
    httpStatus: row.http_status === null ? null : Number(row.http_status),
    errorCode: row.error_code,
    cacheHit: row.cache_hit,
    attempts: Number(row.attempts),
    latencyMs: row.latency_ms === null ? null : Number(row.latency_ms),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    costUsd: new Decimal(row.cost_usd).toFixed(12),
  };
}
