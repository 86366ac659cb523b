import type { Database } from '../kernel/database/database.js';
import type { TransactionId } from '../kernel/event-store/log-position.js';
import { nextTransactionId, resetWalArguments } from '../kernel/event-store/transaction-counter.js';
import { MigrationRefusedError } from './store-endpoint.js';

/**
 * Transaction ids taken per statement while the counter is moved: each is a transaction of its own (a
 * procedure's COMMIT), about 100,000 a second on PostgreSQL 15 and 65,000 on the embedded engine here.
 */
const IDS_PER_STATEMENT = 100_000;

/**
 * The most ids the counter is moved by taking them one by one (about 10 minutes on PostgreSQL here, longer
 * embedded). A target further behind the log than this is refused with the way to move it at once: a new
 * cluster's `pg_resetwal` before its first start. A fresh cluster is a few hundred ids in; an embedded log
 * of a million requests is a few million ids in.
 */
export const MAX_TRANSACTION_IDS_TAKEN = 60_000_000;

/**
 * Moves the target's transaction counter past `newest` (the copied log's newest transaction id), so that
 * every transaction from now on — the copy's own, the rebuild's, the first request's — is ordered after the
 * copied log, and the read horizon (read-horizon.ts) is past it. PostgreSQL hands out ids in order and never
 * goes back, so the only way forward from SQL is to use them up: each iteration of the loop is a transaction
 * that takes an id and commits. Nothing is written but commit records (`synchronous_commit` off for it).
 */
export async function advanceTransactionCounter(target: Database, newest: TransactionId, onProgress: (taken: number, total: number) => void): Promise<number> {
  const start = await nextTransactionId(target);
  if (start > newest) return 0;
  const total = newest + 1n - start;
  if (total > BigInt(MAX_TRANSACTION_IDS_TAKEN)) {
    const fix = target.kind === 'postgres'
      ? `Create the target in a new cluster and, before its first start, move its counter with \`pg_resetwal ${resetWalArguments(newest + 1n)} -D <its data directory>\` ` +
        `(docs/operations.md, "A log restored into another cluster"), then run switchyard migrate again.`
      : `An embedded store cannot be moved that far; keep the copy on PostgreSQL instead.`;
    throw new MigrationRefusedError(
      `The target's next transaction id is ${start}, and the log's newest is ${newest}: ${total} ids would have to be used up, ` +
        `more than the ${MAX_TRANSACTION_IDS_TAKEN.toLocaleString('en-US')} switchyard migrate takes one by one. ${fix}`,
    );
  }
  let taken = 0;
  onProgress(0, Number(total));
  while (BigInt(taken) < total) {
    const step = Math.min(IDS_PER_STATEMENT, Number(total) - taken);
    // A DO block may COMMIT when it is not inside a transaction block (PostgreSQL 11+): one id per iteration,
    // whose commit need not wait for the disk (set for that transaction alone).
    await target.query(
      `DO $$ BEGIN FOR i IN 1..${step} LOOP PERFORM set_config('synchronous_commit', 'off', true); PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$`,
    );
    taken += step;
    onProgress(taken, Number(total));
  }
  // Another session may have taken ids meanwhile; that only moves the counter further.
  const now = await nextTransactionId(target);
  if (now <= newest) throw new Error(`the target's transaction counter is at ${now} after taking ${taken} ids, not past the log's ${newest}`);
  return taken;
}
