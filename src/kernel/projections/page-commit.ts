import type { Database, SqlExecutor, TransactionOptions } from '../database/database.js';
import type { RecordedEvent } from '../event-store/event-store.js';
import { type LogPosition, samePosition } from '../event-store/log-position.js';
import { classifyFailure, thrownByProjection } from './projection-failure.js';
import { projectionCheckpoints } from './projection-checkpoints.js';
import type { DurableProjection } from './projection.js';

/** Where a page is applied: the live projection, or a rebuild's replacement (its schema first on the search path). */
export interface PageTarget {
  projection: DurableProjection;
  /** The checkpoint's name (the projection's, in the live table or in the replacement's copy). */
  name: string;
  /** The rebuild's schema, or null for the live read model. */
  searchPath: string | null;
}

/** The stored checkpoint is not the one the page was read from: someone else (a rebuild's swap, another node) moved it. */
export class StaleCheckpointError extends Error {}

/**
 * A page's effects and its checkpoint commit together, so a page lost with a crashed server is lost
 * whole and applied again from the log: its commit need not wait for the disk, and no longer queues
 * its own WAL flush behind (or ahead of) the appends that the requests are waiting for.
 */
const PROJECTION_COMMIT: TransactionOptions = { flush: 'background' };

/**
 * Applies `events` and moves the checkpoint from `expected` to `next`, in one transaction (three round trips
 * on PostgreSQL: the checkpoint's lock travels with BEGIN and its save with COMMIT). `also` runs in the same
 * transaction after the projection's work, given `next`. Throws StaleCheckpointError when the stored checkpoint is not
 * `expected`; an error out of the projection's own code is marked as such (see classifyFailure).
 */
export async function commitPage(
  database: Database, target: PageTarget, expected: LogPosition, events: readonly RecordedEvent[], next: LogPosition,
  also?: (tx: SqlExecutor, next: LogPosition) => Promise<void>,
): Promise<void> {
  const { projection, name } = target;
  if (events.length > 0) {
    try {
      await projection.prepare?.(events);
    } catch (error) {
      throw thrownByProjection(error);
    }
  }
  const checkpoint = projectionCheckpoints.pageStatements(name, next);
  await database.transaction(async (tx, opened) => {
    const stored = (checkpoint && projectionCheckpoints.fromLocked(opened)) ?? await projectionCheckpoints.lock(tx, name);
    if (!samePosition(stored, expected)) throw new StaleCheckpointError();
    if (events.length > 0) {
      try {
        await projection.handle(tx, events);
      } catch (error) {
        throw thrownByProjection(error);
      }
    }
    await also?.(tx, next);
    if (!checkpoint) await projectionCheckpoints.save(tx, name, next);
  }, { ...PROJECTION_COMMIT, ...checkpoint, ...(target.searchPath ? { searchPath: target.searchPath } : {}) });
}

export type IsolatedOutcome =
  | { kind: 'applied' }
  /** Every event before `event` is applied (the checkpoint stands just before it); `event` fails alone. */
  | { kind: 'poison'; event: RecordedEvent; error: unknown };

/**
 * A page failed deterministically (with `failure`): finds the event at fault without giving up the good ones. The page is
 * split in halves, each applied as a page of its own with the checkpoint moved to its last event (the
 * page's tail to `next`), and a half that fails again is split further: O(log n) transactions find the one
 * event that fails alone, and everything before it is committed. A page that fails only as a whole (its
 * events do not go together) is applied in parts. A transient failure meanwhile is thrown (retried later
 * from the checkpoint reached so far), as is StaleCheckpointError. `committed` follows each commit.
 */
export async function commitIsolating(
  database: Database, target: PageTarget, expected: LogPosition, events: readonly RecordedEvent[], next: LogPosition, failure: unknown,
  committed: (position: LogPosition, last: RecordedEvent | null) => void,
  also?: (tx: SqlExecutor, next: LogPosition) => Promise<void>,
): Promise<IsolatedOutcome> {
  let checkpoint = expected;
  const apply = async (from: number, to: number, knownToFail: unknown): Promise<IsolatedOutcome> => {
    const part = events.slice(from, to);
    const tail = to === events.length;
    const end = tail ? next : positionOf(events[to - 1]);
    if (knownToFail === undefined) {
      try {
        await commitPage(database, target, checkpoint, part, end, also);
        checkpoint = end;
        committed(end, part[part.length - 1] ?? null);
        return { kind: 'applied' };
      } catch (error) {
        if (error instanceof StaleCheckpointError || classifyFailure(target.projection, error) === 'transient') throw error;
        knownToFail = error;
      }
    }
    if (part.length === 1) return { kind: 'poison', event: part[0], error: knownToFail };
    const middle = from + Math.ceil(part.length / 2);
    const first = await apply(from, middle, undefined);
    if (first.kind === 'poison') return first;
    return apply(middle, to, undefined);
  };
  return events.length === 0 ? { kind: 'applied' } : apply(0, events.length, failure);
}

export function positionOf(event: Pick<RecordedEvent, 'transactionId' | 'globalPosition'>): LogPosition {
  return { transactionId: event.transactionId, globalPosition: event.globalPosition };
}
