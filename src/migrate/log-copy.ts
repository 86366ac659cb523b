import type { Database, SqlExecutor } from '../kernel/database/database.js';
import { type LogPosition, START, parseXid8, xid8Param } from '../kernel/event-store/log-position.js';

/**
 * Every column of `events` as text, exactly: the payloads as jsonb's text (parsed back into the same jsonb),
 * `recorded_at` in UTC with its microseconds, the transaction id and position as decimal strings. Nothing
 * passes through a JavaScript number or Date, so nothing is rounded.
 */
const EVENT_COLUMNS = `e.global_position::text AS global_position, e.transaction_id::text AS transaction_id, e.stream_id, e.stream_version,
  e.event_id::text AS event_id, e.event_type, e.schema_version, e.data::text AS data, e.metadata::text AS metadata,
  to_char(e.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS recorded_at`;

interface EventRow {
  global_position: string;
  transaction_id: string;
  stream_id: string;
  stream_version: number;
  event_id: string;
  event_type: string;
  schema_version: number;
  data: string;
  metadata: string;
  recorded_at: string;
}

/**
 * The rows of the page, inserted as they are: `OVERRIDING SYSTEM VALUE` keeps each global position, and the
 * transaction id is the source's (the column's default would take the copying transaction's). Every value
 * travels as one text array per column.
 */
const INSERT_SQL = `INSERT INTO events (global_position, transaction_id, stream_id, stream_version, event_id, event_type, schema_version, data, metadata, recorded_at)
  OVERRIDING SYSTEM VALUE
  SELECT u.global_position::bigint, u.transaction_id::xid8, u.stream_id, u.stream_version::integer, u.event_id::uuid, u.event_type,
         u.schema_version::smallint, u.data::jsonb, u.metadata::jsonb, u.recorded_at::timestamptz
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
       AS u(global_position, transaction_id, stream_id, stream_version, event_id, event_type, schema_version, data, metadata, recorded_at)`;

/** The extent of a log: how many events, and the last one in the read order. */
export interface LogExtent {
  events: number;
  streams: number;
  last: LogPosition | null;
  /** The first event's id (null for an empty log): with the source's address, which log a target is receiving. */
  firstEventId: string | null;
}

export async function logExtent(executor: SqlExecutor): Promise<LogExtent> {
  const [counts] = await executor.query<{ events: string; streams: string }>(
    `SELECT count(*)::text AS events, count(DISTINCT stream_id)::text AS streams FROM events`,
  );
  const [last] = await executor.query<{ transaction_id: string; global_position: string }>(
    `SELECT e.transaction_id::text AS transaction_id, e.global_position::text AS global_position FROM events e ORDER BY e.transaction_id DESC, e.global_position DESC LIMIT 1`,
  );
  const [first] = await executor.query<{ event_id: string }>(`SELECT e.event_id::text AS event_id FROM events e ORDER BY e.transaction_id, e.global_position LIMIT 1`);
  return {
    events: Number(counts.events),
    streams: Number(counts.streams),
    last: last ? { transactionId: parseXid8(last.transaction_id), globalPosition: Number(last.global_position) } : null,
    firstEventId: first?.event_id ?? null,
  };
}

export interface CopyProgress {
  copied: number;
}

/**
 * Copies the source's log into the target after the target's last event, in the read order, a page per
 * target transaction. The target therefore always holds a prefix of the source's log in that order (each page
 * commits whole, after the one before), and a copy that was interrupted resumes after its last committed page.
 *
 * Each event keeps its transaction id, so the source's transactions stay grouped as they were and the log's
 * order — (transaction_id, global_position) — is the source's. It is also what the audit chain hashes: the
 * migrated chain is the source's chain, hash for hash, and every signed checkpoint and every export an
 * auditor kept still verifies. (Renumbering the transactions would keep the order but change every hash.) The
 * target's own transaction counter must then be past the newest copied id before anything new is appended:
 * see transaction-counter-advance.ts.
 */
export async function copyLog(source: SqlExecutor, target: Database, pageSize: number, onPage: (progress: CopyProgress) => void): Promise<number> {
  const [already] = await target.query<{ transaction_id: string; global_position: string }>(
    `SELECT e.transaction_id::text AS transaction_id, e.global_position::text AS global_position FROM events e ORDER BY e.transaction_id DESC, e.global_position DESC LIMIT 1`,
  );
  let after: LogPosition = already ? { transactionId: parseXid8(already.transaction_id), globalPosition: Number(already.global_position) } : START;
  let copied = 0;
  for (;;) {
    const rows = await source.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events e
       WHERE (e.transaction_id, e.global_position) > ($1::xid8, $2::bigint)
       ORDER BY e.transaction_id, e.global_position LIMIT $3`,
      [xid8Param(after.transactionId), after.globalPosition, pageSize],
    );
    if (rows.length === 0) return copied;
    await target.transaction(async (tx) => {
      await tx.query(INSERT_SQL, [
        rows.map((r) => r.global_position), rows.map((r) => r.transaction_id), rows.map((r) => r.stream_id), rows.map((r) => String(r.stream_version)),
        rows.map((r) => r.event_id), rows.map((r) => r.event_type), rows.map((r) => String(r.schema_version)), rows.map((r) => r.data),
        rows.map((r) => r.metadata), rows.map((r) => r.recorded_at),
      ]);
    });
    const last = rows[rows.length - 1];
    after = { transactionId: parseXid8(last.transaction_id), globalPosition: Number(last.global_position) };
    copied += rows.length;
    onPage({ copied });
  }
}

/**
 * The target's identity column continues after the copied positions: an append there takes the next
 * position, never one the source already used (the source's sequence may have been further still — positions
 * are ordered, not dense — so its own value is taken when it is larger).
 */
export async function continuePositions(source: SqlExecutor, target: SqlExecutor): Promise<void> {
  const [sequence] = await source.query<{ last: string | null }>(
    `SELECT greatest((SELECT max(global_position) FROM events), pg_sequence_last_value(pg_get_serial_sequence('events', 'global_position')::regclass))::text AS last`,
  );
  if (sequence.last === null) return;
  await target.query(`SELECT setval(pg_get_serial_sequence('events', 'global_position'), $1::bigint)`, [sequence.last]);
}

/**
 * The state outside the log that nothing can rebuild, copied row for row (idempotently: a resumed run
 * copies what is missing): the hashed admin tokens (the operator's admin token keeps working) and the signed
 * audit checkpoints (attestations made with the signing key; the rebuilt chain must reproduce them).
 */
export const UNREBUILDABLE_TABLES = ['admin_tokens', 'audit_checkpoints'] as const;

export async function copyUnrebuildableState(source: SqlExecutor, target: SqlExecutor): Promise<Record<(typeof UNREBUILDABLE_TABLES)[number], number>> {
  const tokens = await source.query<{ token_id: string; hash: string; origin: string; created_at: string }>(
    `SELECT token_id, hash, origin, created_at::text AS created_at FROM admin_tokens ORDER BY token_id`,
  );
  if (tokens.length > 0) {
    await target.query(
      `INSERT INTO admin_tokens (token_id, hash, origin, created_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]::timestamptz[]) ON CONFLICT (token_id) DO NOTHING`,
      [tokens.map((t) => t.token_id), tokens.map((t) => t.hash), tokens.map((t) => t.origin), tokens.map((t) => t.created_at)],
    );
  }
  const checkpoints = await source.query<{ sequence: string; global_position: string; hash: string; algorithm: string; key_id: string; signature: string; signed_at: string }>(
    `SELECT c.sequence::text AS sequence, c.global_position::text AS global_position, c.hash, c.algorithm, c.key_id, c.signature, c.signed_at::text AS signed_at
     FROM audit_checkpoints c ORDER BY c.sequence`,
  );
  if (checkpoints.length > 0) {
    await target.query(
      `INSERT INTO audit_checkpoints (sequence, global_position, hash, algorithm, key_id, signature, signed_at)
       SELECT * FROM unnest($1::text[]::bigint[], $2::text[]::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]::timestamptz[])
       ON CONFLICT (sequence) DO NOTHING`,
      [checkpoints.map((c) => c.sequence), checkpoints.map((c) => c.global_position), checkpoints.map((c) => c.hash), checkpoints.map((c) => c.algorithm),
        checkpoints.map((c) => c.key_id), checkpoints.map((c) => c.signature), checkpoints.map((c) => c.signed_at)],
    );
  }
  return { admin_tokens: tokens.length, audit_checkpoints: checkpoints.length };
}
