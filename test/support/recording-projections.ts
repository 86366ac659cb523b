import type { SqlExecutor } from '../../src/kernel/database/database.js';
import type { LogPosition, RecordedEvent } from '../../src/kernel/event-store/event-store.js';
import type { DurableProjection, EventTypeFilter, InMemoryProjection, ProjectionReplacement } from '../../src/kernel/projections/projection.js';

/** An in-memory projection that remembers the order in which it was given events. */
export class RecordingProjection implements InMemoryProjection {
  readonly seen: RecordedEvent[] = [];
  last: LogPosition | null = null;

  constructor(
    readonly name: string,
    readonly eventTypes: readonly string[],
  ) {}

  apply(events: readonly RecordedEvent[], position: LogPosition): void {
    this.seen.push(...events);
    this.last = position;
  }

  get eventIds(): string[] {
    return this.seen.map((event) => event.eventId);
  }
}

/**
 * A durable projection that writes one row per event into `projection_log` in the order it applies
 * them. `event_id` is unique, so applying an event twice fails the projection's transaction loudly.
 */
export class LoggingProjection implements DurableProjection {
  constructor(
    readonly name: string,
    readonly eventTypes: EventTypeFilter,
  ) {}

  static async createTable(database: SqlExecutor): Promise<void> {
    await database.query(`
      CREATE TABLE IF NOT EXISTS projection_log (
        seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        projection  text NOT NULL,
        event_id    uuid NOT NULL,
        UNIQUE (projection, event_id)
      )`);
  }

  static async eventIds(database: SqlExecutor, projection: string): Promise<string[]> {
    const rows = await database.query<{ event_id: string }>(
      `SELECT event_id::text AS event_id FROM projection_log WHERE projection = $1 ORDER BY seq`,
      [projection],
    );
    return rows.map((row) => row.event_id);
  }

  async handle(manager: SqlExecutor, events: readonly RecordedEvent[]): Promise<void> {
    await manager.query(
      `INSERT INTO projection_log (projection, event_id)
       SELECT $1, u.id FROM unnest($2::uuid[]) WITH ORDINALITY AS u(id, n) ORDER BY u.n`,
      [this.name, events.map((event) => event.eventId)],
    );
  }

  /** Rebuilt aside: its own rows of the shared table, renumbered in the order the replay applied them. */
  replacement(): ProjectionReplacement {
    return { projection: new LoggingProjection(this.name, this.eventTypes), tables: [{ name: 'projection_log', rowsOf: { column: 'projection', value: this.name } }] };
  }
}
