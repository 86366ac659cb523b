import type { SqlExecutor } from '../database/database.js';
import { type LogPosition } from '../event-store/event-store.js';
import { READ_HORIZON_SQL } from '../event-store/read-horizon.js';
import { START, parseXid8, xid8Param } from '../event-store/log-position.js';
import { ALL_EVENT_TYPES, type EventTypeFilter } from './projection.js';

/** Where a durable projection's checkpoint stands in the log, read from `projection_checkpoints`. */
export async function checkpointOf(database: SqlExecutor, name: string): Promise<{ position: LogPosition; updatedAt: Date } | null> {
  const rows = await database.query<{ transaction_id: string; global_position: string; updated_at: Date | string }>(
    `SELECT transaction_id::text AS transaction_id, global_position::text AS global_position, updated_at
     FROM projection_checkpoints WHERE name = $1`,
    [name],
  );
  if (!rows[0]) return null;
  return { position: { transactionId: parseXid8(rows[0].transaction_id), globalPosition: Number(rows[0].global_position) }, updatedAt: new Date(rows[0].updated_at) };
}

/** The global position of the last event at or before `position` in the read order (0 = none). */
export async function lastCovered(database: SqlExecutor, position: LogPosition | null): Promise<number> {
  if (!position) return 0;
  const rows = await database.query<{ global_position: string }>(
    `SELECT e.global_position::text AS global_position FROM events e
     WHERE (e.transaction_id, e.global_position) <= ($1::text::xid8, $2::bigint)
     ORDER BY e.transaction_id DESC, e.global_position DESC LIMIT 1`,
    [xid8Param(position.transactionId), position.globalPosition],
  );
  return Number(rows[0]?.global_position ?? 0);
}

/** The newest committed event a projection of these types will read, in the read order; null = none. */
export async function lastEventFor(database: SqlExecutor, types: EventTypeFilter): Promise<LogPosition | null> {
  const typed = types !== ALL_EVENT_TYPES;
  const rows = await database.query<{ transaction_id: string; global_position: string }>(
    `SELECT e.transaction_id::text AS transaction_id, e.global_position::text AS global_position FROM events e
     WHERE e.transaction_id < ${READ_HORIZON_SQL} ${typed ? 'AND e.event_type = ANY($1::text[])' : ''}
     ORDER BY e.transaction_id DESC, e.global_position DESC LIMIT 1`,
    typed ? [types] : [],
  );
  return rows[0] ? { transactionId: parseXid8(rows[0].transaction_id), globalPosition: Number(rows[0].global_position) } : null;
}

/** How many committed events of these types lie after `position` (counting stops at `cap`). */
export async function eventsAfter(database: SqlExecutor, position: LogPosition | null, types: EventTypeFilter, cap = 1_000_000): Promise<number> {
  const typed = types !== ALL_EVENT_TYPES;
  const from = position ?? START;
  const rows = await database.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM (
       SELECT 1 FROM events
       WHERE (transaction_id, global_position) > ($1::text::xid8, $2::bigint)
         AND transaction_id < ${READ_HORIZON_SQL} ${typed ? 'AND event_type = ANY($4::text[])' : ''}
       LIMIT $3) behind`,
    typed ? [xid8Param(from.transactionId), from.globalPosition, cap, types] : [xid8Param(from.transactionId), from.globalPosition, cap],
  );
  return Number(rows[0]?.n ?? 0);
}
