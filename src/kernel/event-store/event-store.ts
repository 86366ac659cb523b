/** The event-store port (DESIGN §4): kept narrow so another store (e.g. KurrentDB) can implement it. */
import type { LogPosition, TransactionId } from './log-position.js';

export { type LogPosition, type TransactionId, START, comparePositions, formatPosition } from './log-position.js';

export interface EventMetadata {
  /** Who caused the event: `admin:<tokenId>`, `key:<keyId>`, `console:<user>`, `config:<file>`, `system`. */
  actor?: string;
  /** With a `console:` actor: the console role the change was made in (`admin`, `operator`, …). */
  actorRole?: string;
  correlationId?: string;
  causationId?: string;
  traceId?: string;
  nodeId?: string;
  [extra: string]: unknown;
}

export interface NewEvent<Data = unknown> {
  /** UUIDv7; generated when absent. Re-appending a stored id is a no-op. */
  eventId?: string;
  type: string;
  data: Data;
  schemaVersion?: number;
  metadata?: EventMetadata;
}

export interface RecordedEvent<Data = unknown> {
  globalPosition: number;
  /** The committing transaction (xid8): with globalPosition, the event's place in the global read order. */
  transactionId: TransactionId;
  streamId: string;
  streamVersion: number;
  eventId: string;
  type: string;
  schemaVersion: number;
  data: Data;
  metadata: EventMetadata;
  recordedAt: Date;
  /**
   * The row as the log stores it, for readers that must see exactly that (the audit chain hashes it):
   * the payload before upcasting and `recorded_at` with its microseconds. Filled by the store's reads.
   */
  stored?: StoredForm;
}

export interface StoredForm {
  schemaVersion: number;
  data: unknown;
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ` in UTC. */
  recordedAt: string;
}

/**
 * `no-stream`: the stream must not exist. `stream-exists`: it must. `any`: no check.
 * A number: the stream's current version must equal it (0 = empty).
 */
export type ExpectedVersion = 'no-stream' | 'stream-exists' | 'any' | number;

export interface AppendRequest {
  streamId: string;
  events: readonly NewEvent[];
  expectedVersion: ExpectedVersion;
}

export interface AppendResult {
  /** The stream's version after the append (the version to expect next time). */
  nextExpectedVersion: number;
  /** Global positions of the appended (or, on idempotent re-append, already stored) events. */
  positions: number[];
  /**
   * True when the events went to the outage spool (the database was unreachable): durable on this node
   * and appended, with these ids, when the store returns. Positions are then unknown (empty).
   */
  spooled?: boolean;
}

export interface ReadAllOptions {
  limit: number;
  /** Only these event types (the position still advances past the others). */
  types?: readonly string[];
  /** Only this stream (history readers page one stream by global position). */
  streamId?: string;
}

export interface ReadAllResult {
  events: RecordedEvent[];
  /** Where the next read starts. Past every returned event, and past skipped ones when caught up. */
  next: LogPosition;
  /** True when the read reached the current end of the committed, gap-free log. */
  caughtUp: boolean;
}

export interface EventStore {
  append(request: AppendRequest): Promise<AppendResult>;
  readStream(streamId: string, fromVersion?: number): Promise<RecordedEvent[]>;
  readAll(from: LogPosition, options: ReadAllOptions): Promise<ReadAllResult>;
}

/** NOTIFY channel that wakes subscribers after a commit; the payload lists the committed event types ('' = unknown). */
export const EVENTS_CHANNEL = 'switchyard_events';
