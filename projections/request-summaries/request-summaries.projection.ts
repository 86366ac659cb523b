import { Decimal } from 'decimal.js';
import { isEventOf, type Recorded, recorded, REQUEST_EVENT_TYPES, type RequestEvent } from '../../events/index.js';
import type { CopyValue, DurableProjection, ProjectionReplacement, RecordedEvent, SqlExecutor } from '../../src/kernel/index.js';

/** What a request's row says of how it ended: `incomplete` until its completion or rejection is recorded. */
export type RequestSummaryStatus = 'success' | 'failed' | 'cancelled' | 'rejected' | 'incomplete';
export const REQUEST_SUMMARY_STATUSES: readonly RequestSummaryStatus[] = ['success', 'failed', 'cancelled', 'rejected', 'incomplete'];

/**
 * What one page of events says about one request: folded in memory first, because a page often holds
 * several events of the same request (its admission, attempts and completion) and one statement may write
 * a row only once.
 */
interface PagePart {
  request_id: string;
  at: string;
  global_position: number;
  tenant_id: string | null;
  key_id: string | null;
  alias: string | null;
  operation: string | null;
  /** null: the page says nothing of how the request ended. */
  status: RequestSummaryStatus | null;
  http_status: number | null;
  error_code: string | null;
  attempts: number;
  latency_ms: number | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: string;
  cache_hit: boolean;
  /** The page holds the completion: its totals replace what earlier pages' attempts added up. */
  settled: boolean;
}

/** The page's parts as rows (the parameter is their JSON array). */
const PAGE_ROWS = `
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(
    request_id text, at timestamptz, global_position bigint, tenant_id text, key_id text, alias text, operation text, status text,
    http_status integer, error_code text, attempts integer, latency_ms integer, input_tokens numeric, output_tokens numeric,
    cost_usd numeric, cache_hit boolean, settled boolean)`;

/**
 * The requests whose stream starts in the page (RequestAdmitted or RequestRejected, each appended only as
 * a stream's first event, `expectedVersion: 'no-stream'`, modules/inference/pipeline/request-journal.ts):
 * no row can exist for them yet, since a stream's events are read in order and a page is applied once (its
 * checkpoint moves in the page's own transaction: commitPage in src/kernel/projections/page-commit.ts, which
 * commitIsolating's parts go through too; a rebuild replays into empty copies, replacement-tables.ts, and
 * its swap catches up from the copy's checkpoint in one transaction). So a plain INSERT, each column as
 * SUMMARY_MERGE computes it against no row: no join and no conflict arbiter, which on the embedded store
 * took a page of 150 requests × 3 events from ~10.6 ms to ~6.1 ms. fold() sets http_status and error_code
 * only with status, so they need no CASE here. Were a row there after all, the unique violation fails the
 * page (and the projection halts at it) rather than counting a request twice.
 */
const SUMMARY_INSERT = `
INSERT INTO request_summaries (request_id, at, global_position, tenant_id, key_id, alias, operation, status, http_status, error_code,
  attempts, latency_ms, input_tokens, output_tokens, cost_usd, cache_hit)
SELECT p.request_id, p.at, p.global_position, p.tenant_id, p.key_id, p.alias, p.operation, COALESCE(p.status, 'incomplete'),
  p.http_status, p.error_code, p.attempts, p.latency_ms, p.input_tokens, p.output_tokens, p.cost_usd, p.cache_hit
FROM (${PAGE_ROWS}) p`;

/** SUMMARY_INSERT's columns, for an adapter that loads rows in bulk (the embedded engine's COPY). */
const SUMMARY_COLUMNS = [
  'request_id', 'at', 'global_position', 'tenant_id', 'key_id', 'alias', 'operation', 'status', 'http_status', 'error_code',
  'attempts', 'latency_ms', 'input_tokens', 'output_tokens', 'cost_usd', 'cache_hit',
] as const;

/** A new request's row as SUMMARY_INSERT writes it, in SUMMARY_COLUMNS' order. */
function summaryRow(p: PagePart): CopyValue[] {
  return [
    p.request_id, p.at, p.global_position, p.tenant_id, p.key_id, p.alias, p.operation, p.status ?? 'incomplete', p.http_status, p.error_code,
    p.attempts, p.latency_ms, p.input_tokens, p.output_tokens, p.cost_usd, p.cache_hit,
  ];
}

/**
 * The requests admitted in an earlier page: their parts are merged with the rows already there (LEFT JOIN)
 * and written back. Every column's merge is the same whatever the page boundaries: the earliest time and
 * position, the first tenant, key, alias and operation known, the latest ending, the highest attempt, and
 * token and cost sums that a completion's totals replace. So a rebuild, paged differently, writes the same rows.
 */
const SUMMARY_MERGE = `
WITH page AS (${PAGE_ROWS}
)
INSERT INTO request_summaries AS s (request_id, at, global_position, tenant_id, key_id, alias, operation, status, http_status, error_code,
  attempts, latency_ms, input_tokens, output_tokens, cost_usd, cache_hit)
SELECT p.request_id, LEAST(o.at, p.at), LEAST(o.global_position, p.global_position),
  COALESCE(o.tenant_id, p.tenant_id), COALESCE(o.key_id, p.key_id), COALESCE(o.alias, p.alias), COALESCE(o.operation, p.operation),
  COALESCE(p.status, o.status, 'incomplete'),
  CASE WHEN p.status IS NULL THEN o.http_status ELSE p.http_status END,
  CASE WHEN p.status IS NULL THEN o.error_code ELSE p.error_code END,
  CASE WHEN p.settled THEN p.attempts ELSE GREATEST(o.attempts, p.attempts) END,
  COALESCE(p.latency_ms, o.latency_ms),
  CASE WHEN p.settled THEN p.input_tokens ELSE COALESCE(o.input_tokens, 0) + p.input_tokens END,
  CASE WHEN p.settled THEN p.output_tokens ELSE COALESCE(o.output_tokens, 0) + p.output_tokens END,
  CASE WHEN p.settled THEN p.cost_usd ELSE COALESCE(o.cost_usd, 0) + p.cost_usd END,
  COALESCE(o.cache_hit, false) OR p.cache_hit
FROM page p LEFT JOIN request_summaries o ON o.request_id = p.request_id
ON CONFLICT (request_id) DO UPDATE SET at = EXCLUDED.at, global_position = EXCLUDED.global_position, tenant_id = EXCLUDED.tenant_id,
  key_id = EXCLUDED.key_id, alias = EXCLUDED.alias, operation = EXCLUDED.operation, status = EXCLUDED.status,
  http_status = EXCLUDED.http_status, error_code = EXCLUDED.error_code, attempts = EXCLUDED.attempts, latency_ms = EXCLUDED.latency_ms,
  input_tokens = EXCLUDED.input_tokens, output_tokens = EXCLUDED.output_tokens, cost_usd = EXCLUDED.cost_usd, cache_hit = EXCLUDED.cache_hit`;

/**
 * One row per request — when, whose, which alias, how it ended, attempts, latency, tokens and cost — so
 * that request search pages through an index instead of folding request streams. It follows the request
 * events only (never content), in the projection runner: a request's own path pays nothing for it.
 */
export class RequestSummariesProjection implements DurableProjection {
  readonly name = 'request-summaries';
  readonly eventTypes = REQUEST_EVENT_TYPES;

  async handle(manager: SqlExecutor, events: readonly RecordedEvent[]): Promise<void> {
    const parts = new Map<string, PagePart>();
    /** Requests whose first event is in this page: their rows are new (SUMMARY_INSERT). */
    const started = new Set<string>();
    for (const event of recorded(events)) {
      if (!isEventOf(REQUEST_EVENT_TYPES, event)) continue;
      let part = parts.get(event.data.requestId);
      if (!part) {
        part = emptyPart(event.data.requestId, event.recordedAt, event.globalPosition);
        parts.set(event.data.requestId, part);
      }
      if (event.type === 'RequestAdmitted' || event.type === 'RequestRejected') started.add(event.data.requestId);
      fold(part, event);
    }
    const fresh: PagePart[] = [];
    const continued: PagePart[] = [];
    for (const part of parts.values()) (started.has(part.request_id) ? fresh : continued).push(part);
    // Distinct statement names: each is prepared once per session and its plan kept.
    if (fresh.length > 0) {
      // On the embedded engine the rows go in by COPY: a page of 170 new requests took ~9 ms of its one session
      // as JSON, ~5.5 ms as CSV, and every request's append waits for that session.
      if (manager.copyRows) await manager.copyRows('request_summaries', SUMMARY_COLUMNS, fresh.map(summaryRow));
      else await manager.query(SUMMARY_INSERT, [JSON.stringify(fresh)], 'switchyard_request_summaries_insert_v1');
    }
    if (continued.length > 0) await manager.query(SUMMARY_MERGE, [JSON.stringify(continued)], 'switchyard_request_summaries_page_v1');
  }

  replacement(): ProjectionReplacement {
    return { projection: new RequestSummariesProjection(), tables: [{ name: 'request_summaries' }] };
  }
}

function emptyPart(requestId: string, at: Date, globalPosition: number): PagePart {
  return {
    request_id: requestId, at: at.toISOString(), global_position: globalPosition, tenant_id: null, key_id: null, alias: null, operation: null,
    status: null, http_status: null, error_code: null, attempts: 0, latency_ms: null, input_tokens: 0, output_tokens: 0, cost_usd: '0',
    cache_hit: false, settled: false,
  };
}

/** Who sent it: the first event that says so wins, as the statement's merge does across pages. */
function identify(part: PagePart, who: { tenantId?: string; keyId?: string; alias?: string; operation?: string }): void {
  part.tenant_id ??= who.tenantId ?? null;
  part.key_id ??= who.keyId ?? null;
  part.alias ??= who.alias ?? null;
  part.operation ??= who.operation ?? null;
}

function fold(part: PagePart, event: Recorded<RequestEvent>): void {
  switch (event.type) {
    case 'RequestAdmitted':
      identify(part, event.data);
      return;
    case 'RequestRejected':
      identify(part, event.data);
      part.status = 'rejected';
      part.http_status = event.data.status;
      part.error_code = event.data.code;
      return;
    case 'AttemptFinished':
      identify(part, event.data);
      part.attempts = Math.max(part.attempts, event.data.attempt);
      part.input_tokens += event.data.usage.input;
      part.output_tokens += event.data.usage.output;
      part.cost_usd = new Decimal(part.cost_usd).plus(event.data.cost.total).toFixed();
      return;
    case 'RequestServedFromCache':
      identify(part, event.data);
      part.cache_hit = true;
      return;
    case 'RequestCompleted': {
      const { totals } = event.data;
      part.status = event.data.status;
      part.http_status = event.data.httpStatus;
      part.error_code = event.data.errorCode;
      part.cache_hit ||= event.data.cacheHit;
      part.settled = true;
      part.attempts = totals.attempts;
      part.latency_ms = Math.round(totals.latencyMs);
      part.input_tokens = totals.usage.input;
      part.output_tokens = totals.usage.output;
      part.cost_usd = new Decimal(totals.costUsd).toFixed();
      return;
    }
    default: {
      const unknownEvent: never = event;
      throw new Error(`Not a request event: ${(unknownEvent as { type: string }).type}`);
    }
  }
}
