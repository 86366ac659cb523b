import { Inject, Injectable } from '@nestjs/common';
import { AUDITED_EVENT_TYPES, upcasters } from '../../events/index.js';
import { comparePositions, type Database, DATABASE, type LogPosition, parseXid8, READ_HORIZON_SQL, xid8Param } from '../../src/kernel/index.js';
import { encodePageToken, positionAfter } from './page-token.js';
import { aboutTenantSql } from './tenant-log-filter.js';

export interface AuditQuery {
  actor?: string;
  /** Event types (the change made), e.g. AliasPublished; absent = every control-plane change. */
  actions?: readonly string[];
  from?: Date;
  to?: Date;
  after?: string;
  limit: number;
  /** Only the changes about this tenant (its tenant stream and its keys'): a tenant admin's read. */
  tenantId?: string;
}

export class UnknownActionError extends Error {
  override readonly name = 'UnknownActionError';
}

interface Row {
  global_position: string;
  transaction_id: string;
  stream_id: string;
  stream_version: number;
  event_id: string;
  event_type: string;
  schema_version: number;
  data: unknown;
  metadata: Record<string, unknown>;
  recorded_at: Date | string;
}

/**
 * `GET /admin/v1/audit` and `switchyard audit log`: control-plane changes (providers, deployments, prices,
 * aliases, tenants, keys) with who made them, in global order, filtered by actor, change and time — for a
 * tenant admin, only the changes to its tenant and its keys.
 * Same gap-free rule as every reader: only transactions below the snapshot's xmin.
 */
@Injectable()
export class ControlPlaneAudit {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async list(query: AuditQuery) {
    const actions = query.actions && query.actions.length ? query.actions : AUDITED_EVENT_TYPES;
    const unknown = actions.filter((action) => !AUDITED_EVENT_TYPES.includes(action));
    if (unknown.length) throw new UnknownActionError(`unknown action ${unknown.join(', ')}: use one of ${AUDITED_EVENT_TYPES.join(', ')}`);
    const from: LogPosition = await positionAfter(query.after, async (position) => {
      const rows = query.tenantId === undefined
        ? await this.database.query<{ transaction_id: string }>(`SELECT transaction_id::text AS transaction_id FROM events WHERE global_position = $1`, [position])
        : await this.database.query<{ transaction_id: string }>(
          `SELECT e.transaction_id::text AS transaction_id FROM events e WHERE e.global_position = $1 AND ${aboutTenantSql('e', '$2')}`, [position, query.tenantId],
        );
      return rows[0]?.transaction_id ?? null;
    });
    const params: unknown[] = [xid8Param(from.transactionId), from.globalPosition, actions, query.limit];
    let filters = '';
    if (query.actor !== undefined) {
      params.push(query.actor);
      filters += ` AND metadata->>'actor' = $${params.length}`;
    }
    if (query.from) {
      params.push(query.from);
      filters += ` AND recorded_at >= $${params.length}`;
    }
    if (query.to) {
      params.push(query.to);
      filters += ` AND recorded_at < $${params.length}`;
    }
    if (query.tenantId !== undefined) {
      params.push(query.tenantId);
      filters += ` AND ${aboutTenantSql('events', `$${params.length}`)}`;
    }
    const rows = await this.database.query<Row & { horizon: string }>(
      `WITH horizon AS (SELECT ${READ_HORIZON_SQL} AS xmin)
       SELECT horizon.xmin::text AS horizon, page.* FROM horizon LEFT JOIN LATERAL (
         SELECT global_position::text AS global_position, transaction_id::text AS transaction_id, stream_id, stream_version,
                event_id::text AS event_id, event_type, schema_version, data, metadata, recorded_at
         FROM events
         WHERE (events.transaction_id, events.global_position) > ($1::text::xid8, $2::bigint) AND events.transaction_id < horizon.xmin
           AND event_type = ANY($3::text[])${filters}
         ORDER BY events.transaction_id, events.global_position LIMIT $4
       ) page ON true`,
      params,
    );
    const found = rows.filter((row) => row.event_id !== null);
    const last = found[found.length - 1];
    const caughtUp = found.length < query.limit;
    let next: LogPosition = last ? { transactionId: parseXid8(last.transaction_id), globalPosition: Number(last.global_position) } : from;
    // At the end, continue from the horizon: every transaction below it has ended and was read.
    const horizon: LogPosition = { transactionId: parseXid8(rows[0].horizon), globalPosition: 0 };
    if (caughtUp && comparePositions(horizon, next) > 0) next = horizon;
    return {
      data: found.map((row) => {
        const { data } = upcasters.upcast(row.event_type, Number(row.schema_version), row.data);
        return {
          globalPosition: Number(row.global_position),
          at: new Date(row.recorded_at).toISOString(),
          actor: typeof row.metadata?.actor === 'string' ? row.metadata.actor : null,
          action: row.event_type,
          stream: row.stream_id,
          streamVersion: Number(row.stream_version),
          correlationId: typeof row.metadata?.correlationId === 'string' ? row.metadata.correlationId : null,
          eventId: row.event_id,
          data,
        };
      }),
      next: encodePageToken(next),
      caughtUp,
    };
  }
}
