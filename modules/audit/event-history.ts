import { Inject, Injectable } from '@nestjs/common';
import { upcasters } from '../../events/index.js';
import { type Database, DATABASE, type LogPosition, parseXid8, READ_HORIZON_SQL, SqlEventStore, xid8Param } from '../../src/kernel/index.js';
import { eventView } from '../relay/index.js';
import { encodePageToken, positionAfter } from './page-token.js';
import { aboutTenantSql } from './tenant-log-filter.js';

export interface EventPageQuery {
  after?: string;
  stream?: string;
  types?: readonly string[];
  limit: number;
  /** Only the events about this tenant (a tenant admin's read); absent = the whole log. */
  tenantId?: string;
}

interface TenantPageRow {
  horizon: string;
  last_transaction_id: string | null;
  last_global_position: string | null;
  scanned: string;
  global_position: string | null;
  transaction_id: string | null;
  stream_id: string;
  stream_version: number;
  event_id: string | null;
  event_type: string;
  schema_version: number;
  data: unknown;
  metadata: Record<string, unknown>;
  recorded_at: string;
}

/** `GET /admin/v1/events` and `switchyard events list`: the global log, paged by position, gap-free. */
@Injectable()
export class EventHistory {
  /**
   * How many events of the log (after the stream and type filters) one tenant-confined page looks at, at
   * most. A tenant whose events are sparse in a long log gets a short (even empty) page with
   * `caughtUp: false` and a token past what was looked at, instead of a read of the whole log per call.
   * Settable for tests.
   */
  tenantScanWindow = 10_000;

  constructor(
    private readonly store: SqlEventStore,
    @Inject(DATABASE) private readonly database: Database,
  ) {}

  async page(query: EventPageQuery) {
    if (query.tenantId !== undefined) return this.tenantPage(query, query.tenantId);
    const from = await positionAfter(query.after, (position) => this.transactionOf(position));
    const page = await this.store.readAll(from, {
      limit: query.limit,
      ...(query.types && query.types.length ? { types: query.types } : {}),
      ...(query.stream ? { streamId: query.stream } : {}),
    });
    return {
      data: page.events.map(eventView),
      // Always a token: at the end of the log it is where to poll from next.
      next: encodePageToken(page.next),
      caughtUp: page.caughtUp,
    };
  }

  /**
   * The transaction of the event at `globalPosition`, or null when there is none — or, with `tenantId`,
   * none about that tenant (a tenant admin's `after=N` must not tell what lies at another tenant's positions).
   */
  async transactionOf(globalPosition: number, tenantId?: string): Promise<string | null> {
    const rows = tenantId === undefined
      ? await this.database.query<{ transaction_id: string }>(
        `SELECT transaction_id::text AS transaction_id FROM events WHERE global_position = $1`, [globalPosition],
      )
      : await this.database.query<{ transaction_id: string }>(
        `SELECT e.transaction_id::text AS transaction_id FROM events e WHERE e.global_position = $1 AND ${aboutTenantSql('e', '$2')}`,
        [globalPosition, tenantId],
      );
    return rows[0]?.transaction_id ?? null;
  }

  /**
   * One page of the events about a tenant, in the same global order and with the same gap-free horizon as
   * the whole log. Full pages end at their last event; a page that looked at `tenantScanWindow` events
   * without filling up ends where it stopped looking; at the end of the log the token is the horizon. The
   * answer carries nothing about other tenants' events but the global positions the log gives every event.
   */
  private async tenantPage(query: EventPageQuery, tenantId: string) {
    const from = await positionAfter(query.after, (position) => this.transactionOf(position, tenantId));
    const params: unknown[] = [xid8Param(from.transactionId), from.globalPosition, query.limit, this.tenantScanWindow, tenantId];
    let filters = '';
    if (query.types && query.types.length) {
      params.push(query.types);
      filters += ` AND e.event_type = ANY($${params.length}::text[])`;
    }
    if (query.stream) {
      params.push(query.stream);
      filters += ` AND e.stream_id = $${params.length}`;
    }
    const rows = await this.database.query<TenantPageRow>(
      `WITH horizon AS (SELECT ${READ_HORIZON_SQL} AS xmin),
       scanned AS (
         SELECT e.transaction_id, e.global_position, e.stream_id, e.metadata FROM events e, horizon
         WHERE (e.transaction_id, e.global_position) > ($1::text::xid8, $2::bigint) AND e.transaction_id < horizon.xmin${filters}
         ORDER BY e.transaction_id, e.global_position LIMIT $4
       ),
       matched AS (
         SELECT s.transaction_id, s.global_position FROM scanned s WHERE ${aboutTenantSql('s', '$5')}
         ORDER BY s.transaction_id, s.global_position LIMIT $3
       ),
       last AS (SELECT transaction_id, global_position FROM scanned ORDER BY transaction_id DESC, global_position DESC LIMIT 1)
       SELECT horizon.xmin::text AS horizon, (SELECT count(*) FROM scanned)::text AS scanned,
              (SELECT transaction_id::text FROM last) AS last_transaction_id, (SELECT global_position::text FROM last) AS last_global_position,
              page.*
       FROM horizon LEFT JOIN LATERAL (
         SELECT e.global_position::text AS global_position, e.transaction_id::text AS transaction_id, e.stream_id, e.stream_version,
                e.event_id::text AS event_id, e.event_type, e.schema_version, e.data, e.metadata,
                to_char(e.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS recorded_at
         FROM matched m JOIN events e ON e.transaction_id = m.transaction_id AND e.global_position = m.global_position
         ORDER BY e.transaction_id, e.global_position
       ) page ON true`,
      params,
    );
    const head = rows[0];
    const found = rows.filter((row) => row.event_id !== null);
    const full = found.length === query.limit;
    const windowFull = Number(head.scanned) >= this.tenantScanWindow;
    const positionOf = (transactionId: string, globalPosition: string): LogPosition => ({ transactionId: parseXid8(transactionId), globalPosition: Number(globalPosition) });
    const lastFound = found[found.length - 1];
    let next: LogPosition;
    if (full) next = positionOf(lastFound.transaction_id!, lastFound.global_position!);
    else if (windowFull) next = positionOf(head.last_transaction_id!, head.last_global_position!);
    else {
      // Everything below the horizon was looked at: resume there (or after the last event, if that is later).
      next = lastFound ? positionOf(lastFound.transaction_id!, lastFound.global_position!) : from;
      const horizon = parseXid8(head.horizon);
      if (horizon > next.transactionId) next = { transactionId: horizon, globalPosition: 0 };
    }
    return {
      data: found.map((row) => {
        const upcast = upcasters.upcast(row.event_type, Number(row.schema_version), row.data);
        return eventView({
          globalPosition: Number(row.global_position),
          transactionId: parseXid8(row.transaction_id!),
          streamId: row.stream_id,
          streamVersion: Number(row.stream_version),
          eventId: row.event_id!,
          type: row.event_type,
          schemaVersion: upcast.schemaVersion,
          data: upcast.data,
          metadata: row.metadata,
          recordedAt: new Date(row.recorded_at),
        });
      }),
      next: encodePageToken(next),
      caughtUp: !full && !windowFull,
    };
  }
}
