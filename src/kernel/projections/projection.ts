import type { EntityManager } from 'typeorm';
import type { LogPosition, RecordedEvent } from '../event-store/event-store.js';

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
  readonly eventTypes: readonly string[];
  handle(manager: EntityManager, events: readonly RecordedEvent[]): Promise<void>;
  /** Deletes everything the projection wrote, before a rebuild from position zero. */
  reset(manager: EntityManager): Promise<void>;
}
