import type { SqlExecutor } from '../database/database.js';
import { type LogPosition, parseXid8, xid8Param } from '../event-store/log-position.js';
import { redactText } from '../redaction/redact-text.js';

/**
 * A durable projection stopped at an event it cannot apply (docs/operations.md "When a projection halts"): every event
 * before it is applied, nothing after it will be until an operator resumes it (or a restart, or a rebuild
 * that gets past it). Recorded in `projection_halts`, so every process sees it.
 */
export interface ProjectionHalt {
  name: string;
  /** The event's position: the checkpoint stands just before it. */
  position: LogPosition;
  eventId: string;
  eventType: string;
  /** The failure's message (redacted: no address or credential, one line, bounded). */
  error: string;
  /** The SQLSTATE (or the store's error code) when there was one. */
  errorCode: string | null;
  haltedAt: Date;
}

interface HaltRow {
  name: string;
  transaction_id: string;
  global_position: string;
  event_id: string;
  event_type: string;
  error: string;
  error_code: string | null;
  halted_at: Date | string;
}

const COLUMNS = `name, transaction_id::text AS transaction_id, global_position::text AS global_position, event_id::text AS event_id,
  event_type, error, error_code, halted_at`;

/** Longest error text a halt keeps. */
const MAX_ERROR_LENGTH = 500;

/** `projection_halts`: one row per halted durable projection (migrations/postgres/…-projection-halts.ts). */
export const projectionHalts = {
  async record(executor: SqlExecutor, halt: ProjectionHalt): Promise<void> {
    await executor.query(
      `INSERT INTO projection_halts (name, transaction_id, global_position, event_id, event_type, error, error_code, halted_at)
       VALUES ($1, $2::xid8, $3, $4::uuid, $5, $6, $7, $8)
       ON CONFLICT (name) DO UPDATE SET transaction_id = EXCLUDED.transaction_id, global_position = EXCLUDED.global_position,
         event_id = EXCLUDED.event_id, event_type = EXCLUDED.event_type, error = EXCLUDED.error, error_code = EXCLUDED.error_code,
         halted_at = EXCLUDED.halted_at`,
      [halt.name, xid8Param(halt.position.transactionId), halt.position.globalPosition, halt.eventId, halt.eventType, halt.error, halt.errorCode, halt.haltedAt.toISOString()],
    );
  },

  async load(executor: SqlExecutor, name: string): Promise<ProjectionHalt | null> {
    const rows = await executor.query<HaltRow>(`SELECT ${COLUMNS} FROM projection_halts WHERE name = $1`, [name]);
    return rows[0] ? fromRow(rows[0]) : null;
  },

  async list(executor: SqlExecutor): Promise<ProjectionHalt[]> {
    const rows = await executor.query<HaltRow>(`SELECT ${COLUMNS} FROM projection_halts ORDER BY name`);
    return rows.map(fromRow);
  },

  /** Removes the halt (an operator's resume); says whether there was one. */
  async clear(executor: SqlExecutor, name: string): Promise<boolean> {
    const rows = await executor.query(`DELETE FROM projection_halts WHERE name = $1 RETURNING name`, [name]);
    return rows.length > 0;
  },

  /** In a page's transaction: the projection has applied everything up to `position`, so a halt at or before it is over. */
  async clearUpTo(executor: SqlExecutor, name: string, position: LogPosition): Promise<void> {
    await executor.query(
      `DELETE FROM projection_halts WHERE name = $1 AND (transaction_id, global_position) <= ($2::xid8, $3::bigint)`,
      [name, xid8Param(position.transactionId), position.globalPosition],
    );
  },
};

/**
 * The error of a halt as stored and shown: its message, redacted and bounded. A long run of digits (the
 * 309 of 1e308 written out) is shortened to its start and length first: it is the value at fault, not a
 * secret, and the redaction would otherwise take it for a random token.
 */
export function haltError(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\d{25,}/g, (digits) => `${digits.slice(0, 12)}…(${digits.length} digits)`);
  return redactText(message, MAX_ERROR_LENGTH) || 'failed without a message';
}

/** `halted at global position 1234 (event 0192…, AttemptFinished) since …: the error [code]`, for logs, status and readiness. */
export function describeHalt(halt: ProjectionHalt): string {
  return `halted at global position ${halt.position.globalPosition} (event ${halt.eventId}, ${halt.eventType}) since ` +
    `${halt.haltedAt.toISOString()}: ${halt.error}${halt.errorCode ? ` [${halt.errorCode}]` : ''}`;
}

function fromRow(row: HaltRow): ProjectionHalt {
  return {
    name: row.name,
    position: { transactionId: parseXid8(row.transaction_id), globalPosition: Number(row.global_position) },
    eventId: row.event_id,
    eventType: row.event_type,
    error: row.error,
    errorCode: row.error_code,
    haltedAt: new Date(row.halted_at),
  };
}
