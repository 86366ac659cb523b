import { isConnectionLoss } from '../database/connection-loss.js';
import { sqlErrorCode } from '../database/database.js';
import type { DurableProjection, FailureKind } from './projection.js';

/**
 * SQLSTATE classes that say the statement met data or a schema it cannot handle, so that running it again
 * on the same events fails the same way: cardinality (21), data exceptions (22: a value out of range, not a
 * number), integrity constraints (23), syntax or access rules (42), WITH CHECK OPTION (44), program limits
 * (54: a row or index entry too large) and features not supported (0A). Every other class — connection
 * exceptions (08), transaction rollbacks such as serialization failures and deadlocks (40), insufficient
 * resources (53), objects in use or locks not available (55), operator intervention such as a shutdown or
 * a cancelled statement (57), system errors such as a full disk (58), internal errors (XX) — may pass later.
 */
const DETERMINISTIC_CLASSES = new Set(['21', '22', '23', '42', '44', '54', '0A']);

/** The embedded engine's thread going away reports itself by message only. */
const ENGINE_GONE = ["the embedded database's thread", 'PGlite is closed'];

/** Errors a projection's own code threw (out of `handle` or `prepare`), as opposed to the runner's or the driver's. */
const fromProjection = new WeakSet<object>();

/** Marks an error as thrown by a projection's own code (what `classifyFailure` calls deterministic when nothing else says otherwise). */
export function thrownByProjection(error: unknown): unknown {
  if (typeof error === 'object' && error !== null) fromProjection.add(error);
  return error;
}

/**
 * Whether a page's failure would recur on the same events (`deterministic`: the runner finds the event and
 * halts the projection at it) or may pass when tried again (`transient`: retried on the next wake-up, as a
 * database outage must be). The projection's own rule first (a store other than PostgreSQL); then the
 * SQLSTATE; a lost connection, a socket error or a stopped engine is transient; any other error thrown by
 * the projection's own code (a payload it cannot read, a number that is not one) is deterministic; what is
 * left (the runner's own statements failing without a SQLSTATE) is transient — a projection is never halted
 * on a failure nobody can attribute to its events.
 */
export function classifyFailure(projection: Pick<DurableProjection, 'classify'>, error: unknown): FailureKind {
  const own = projection.classify?.(error);
  if (own) return own;
  const code = sqlErrorCode(error);
  if (code && /^[0-9A-Z]{5}$/.test(code)) return DETERMINISTIC_CLASSES.has(code.slice(0, 2)) ? 'deterministic' : 'transient';
  if (isConnectionLoss(error) || (code !== undefined && /^(E[A-Z]+|UND_ERR_\w+)$/.test(code))) return 'transient';
  const message = error instanceof Error ? error.message : String(error);
  if (ENGINE_GONE.some((text) => message.includes(text))) return 'transient';
  return typeof error === 'object' && error !== null && fromProjection.has(error) ? 'deterministic' : 'transient';
}
