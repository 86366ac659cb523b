import type { SqlExecutor } from '../database/database.js';
import type { LogPosition, RecordedEvent } from '../event-store/event-store.js';

/**
 * A projection that follows every event type, including ones added after it was written (the audit
 * chain must never skip an event because its type was unknown when the code was built).
 */
export const ALL_EVENT_TYPES = 'all';

export type EventTypeFilter = readonly string[] | typeof ALL_EVENT_TYPES;

/**
 * A per-node projection kept in memory (routing snapshot, key index). It starts from position zero on
 * every boot and must stay cheap to rebuild, so it subscribes to the control-plane event types only.
 */
export interface InMemoryProjection {
  readonly name: string;
  readonly eventTypes: readonly string[];
  apply(events: readonly RecordedEvent[], position: LogPosition): void;
}

/**
 * A read model in PostgreSQL (cost ledger, tenant spend, audit chain). `handle` runs inside the same
 * transaction that moves the checkpoint, so each event takes effect exactly once under crash and replay.
 * Singleton: one node at a time runs it (advisory-lock lease).
 */
export interface DurableProjection {
  readonly name: string;
  readonly eventTypes: EventTypeFilter;
  handle(manager: SqlExecutor, events: readonly RecordedEvent[]): Promise<void>;
  /**
   * Called with a page's events just before the transaction that hands them to `handle` opens, for work
   * that needs no database and takes long enough to matter (the audit chain's hashing): outside the
   * transaction, the embedded engine's other statements (every request's append) need not wait for it,
   * nor does the checkpoint's row lock stay held. What it computes is a hint: `handle` must check that it
   * still applies.
   */
  prepare?(events: readonly RecordedEvent[]): Promise<void>;
  /** Deletes everything the projection wrote, before a rebuild from position zero. */
  reset(manager: SqlExecutor): Promise<void>;
  /**
   * Called before the first batch after the runner (re)loads the checkpoint: at start, when this node
   * (re)acquires the lease, and when another writer or a rebuild moved the checkpoint. A projection whose
   * writes live outside PostgreSQL (ClickHouse) forgets what it believed it had written and re-reads it.
   */
  resume?(): Promise<void>;
}
