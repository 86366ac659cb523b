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
  /**
   * What fixes a halt of this projection at `error`, for the log line that reports it; null or undefined: what
   * fixes a projection of the database (an upgrade whose upcaster repairs the event, a schema fix). The relay's,
   * for a message the broker refused, is the broker's limit or permission.
   */
  haltRemedy?(error: unknown): string | null;
  /**
   * Where a rebuild builds this projection's replacement while the live read model keeps serving (and
   * moving): see `ProjectionReplacement`. A projection without one cannot be rebuilt.
   */
  replacement?(): ProjectionReplacement;
  /**
   * Whether a failure of this projection's page would fail the same way again (`deterministic`: the events
   * or the schema are at fault — the runner then isolates the event and halts the projection at it) or may
   * pass when tried later (`transient`: the runner retries on its next wake-up). Undefined leaves it to the
   * runner's rule (`classifyFailure`), which knows PostgreSQL's and the network's errors; a projection that
   * writes elsewhere (ClickHouse) names its store's.
   */
  classify?(error: unknown): FailureKind | undefined;
  /**
   * Called before the first batch after the runner (re)loads the checkpoint: at start, when this node
   * (re)acquires the lease, and when another writer or a rebuild moved the checkpoint. A projection whose
   * writes live outside PostgreSQL (ClickHouse) forgets what it believed it had written and re-reads it.
   */
  resume?(): Promise<void>;
}

/** See `DurableProjection.classify`. */
export type FailureKind = 'transient' | 'deterministic';

/**
 * How a rebuild replays a projection aside (docs/operations.md "Rebuilding aside"): into tables of a schema of its own,
 * created empty LIKE the live ones, with a checkpoint of its own there, while the live projection keeps
 * serving and moving. Only when the replacement has reached the head is it swapped in, in one transaction
 * that holds the live checkpoint's lock; a replay that fails leaves the live read model as it was.
 */
export interface ProjectionReplacement {
  /** A fresh instance that replays into the replacement: it shares no state (a chain head, high-water marks) with the live one. */
  readonly projection: DurableProjection;
  /**
   * The PostgreSQL tables the projection writes. The replay's transactions put the rebuild's schema first on
   * the search path, so `projection`'s SQL, unchanged, writes the replacement's copies; tables not listed
   * (the log itself) are found where they always are. The swap makes each live table equal to its copy.
   */
  readonly tables: readonly ReplacedTable[];
  /** Creates the replacement's storage outside PostgreSQL (ClickHouse's tables), empty, before the replay. */
  create?(): Promise<void>;
  /**
   * Inside the swap's transaction, once the replacement has caught up and the PostgreSQL rows are replaced,
   * before the live checkpoint moves: puts the storage outside PostgreSQL in place of the live one.
   */
  swap?(): Promise<void>;
  /** Drops what `create` made and what `swap` set aside, after a swap or a failed replay. */
  discard?(): Promise<void>;
}

export interface ReplacedTable {
  name: string;
  /**
   * A table that several projections share: only the rows whose `column` holds `value` are this
   * projection's (the replay writes only those, and the swap replaces only those).
   */
  rowsOf?: { column: string; value: string };
}
