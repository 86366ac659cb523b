import { ConfigurationError } from '../configuration-error.js';
import type { SqlExecutor } from '../database/database.js';
import { type TransactionId, parseXid8 } from './log-position.js';

/**
 * The next transaction id the server will hand out (`xmax` of a fresh snapshot). Read without taking an id:
 * `pg_current_xact_id()` would assign one to the reading transaction.
 */
export async function nextTransactionId(executor: SqlExecutor): Promise<TransactionId> {
  const rows = await executor.query<{ next: string }>(`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS next`);
  return parseXid8(rows[0].next);
}

/** The transaction id of the newest event in the read order (null for an empty log). */
export async function newestLoggedTransactionId(executor: SqlExecutor): Promise<TransactionId | null> {
  const rows = await executor.query<{ newest: string }>(
    `SELECT e.transaction_id::text AS newest FROM events e ORDER BY e.transaction_id DESC, e.global_position DESC LIMIT 1`,
  );
  return rows[0] ? parseXid8(rows[0].newest) : null;
}

/**
 * `pg_resetwal`'s arguments for a next transaction id: `-x` takes the low 32 bits, `-e` the epoch (the
 * high 32 bits of an xid8), which is only needed past the first 4,294,967,296 ids.
 */
export function resetWalArguments(next: TransactionId): string {
  const epoch = next >> 32n;
  const xid = next & 0xffffffffn;
  return epoch > 0n ? `-e ${epoch} -x ${xid}` : `-x ${xid}`;
}

/**
 * Refuses a log whose newest event carries a transaction id at or beyond the server's counter. The log is
 * read in (transaction_id, global_position) order below the oldest running transaction (read-horizon.ts):
 * such events would stay unread until the counter passed them, and every new event would be ordered before
 * them. It happens when the `events` table was restored into another cluster (pg_dump and pg_restore, a
 * copied table), whose counter is behind the one that wrote the log. The message names both fixes.
 */
export async function checkLogBehindTransactionCounter(executor: SqlExecutor): Promise<void> {
  const newest = await newestLoggedTransactionId(executor);
  if (newest === null) return;
  const next = await nextTransactionId(executor);
  if (newest < next) return;
  throw new ConfigurationError(
    `The event store's newest event was written by transaction ${newest}, but this database server's next transaction id is ${next}: ` +
      `the log was restored into a cluster whose transaction counter is behind the one that wrote it (pg_dump/pg_restore or a copied table). ` +
      `New events would be ordered before the stored ones, and readers would not see the stored ones, so Switchyard does not start on it. ` +
      `Fix it in either of two ways: stop this PostgreSQL server and move its counter past the log with ` +
      `\`pg_resetwal ${resetWalArguments(newest + 1n)} -D <its data directory>\` (docs/operations.md, "A log restored into another cluster"), ` +
      `or copy the log into an empty database with \`switchyard migrate --to postgres://…\`, which keeps every event's transaction id and moves the new database's counter past them.`,
  );
}
