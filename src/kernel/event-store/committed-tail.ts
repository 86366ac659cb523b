import type { ReadAllOptions, ReadAllResult, RecordedEvent } from './event-store.js';
import { type LogPosition, comparePositions } from './log-position.js';

/** An event this process committed, as the log stores it: its payloads kept as the JSON the append sent. */
export interface CommittedEvent {
  globalPosition: number;
  transactionId: bigint;
  streamId: string;
  streamVersion: number;
  eventId: string;
  type: string;
  /**
   * The append's document (`{"s":…,"e":[…]}`, see PreparedAppend) as UTF-8 bytes, shared by its events, and
   * this event's index in it. Bytes outside the JavaScript heap: held for a moment longer than the request
   * that wrote them, the text would survive the young generation's collections and be copied into the old one
   * only to die there (a 4,096-event tail of strings grew the old space by 45 MB under load).
   */
  document: Buffer;
  index: number;
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ`, as the store's reads return it. */
  recordedAt: string;
}

/**
 * What one statement on the log's only session did, applied in the order the statements were issued: events
 * it committed, a horizon it read (everything after it will pass through here), or an effect on the log
 * that this tail cannot describe (it forgets everything until a read gives it a horizon again).
 */
export type StatementOutcome =
  | { kind: 'committed'; events: CommittedEvent[] }
  | { kind: 'read'; horizon: LogPosition }
  | { kind: 'unknown' }
  | { kind: 'nothing' };

export interface Statement {
  outcome: StatementOutcome | null;
  /** Resolves a read waiting for this statement (the newest issued when the read began) to be applied. */
  applied?: () => void;
}

/** An event in an append's document, as prepareAppend wrote it: schema version, data, metadata. */
interface StoredEvent {
  v: number;
  d: unknown;
  m: unknown;
}

type Upcast = (type: string, schemaVersion: number, data: unknown) => { schemaVersion: number; data: unknown };

/**
 * The newest events of a log this process alone writes (the embedded engine: one session, one process), so
 * that readers at the head (the projections, every 100 ms) take them from memory instead of reading back,
 * through the engine, what this process has just appended: on PGlite that read cost as much engine time as
 * the append it follows.
 *
 * It is only ever a prefix of the log in commit order. The engine runs statements one at a time in the order
 * they were issued (its session is a FIFO mutex), so a statement's outcome is applied only once every
 * statement issued before it has settled: a statement still running holds back those after it, and no read
 * here can see a later commit while missing an earlier one. Everything after `anchor` is here; a read from
 * before it returns null and goes to the engine.
 */
export class CommittedTail {
  private readonly issued: Statement[] = [];
  private events: CommittedEvent[] = [];
  private anchor: LogPosition | null = null;

  constructor(
    private readonly capacity: number,
    private readonly upcast: Upcast,
  ) {}

  /** Called just before a statement is issued on the log's session (nothing may be awaited in between). */
  issue(): Statement {
    const statement: Statement = { outcome: null };
    this.issued.push(statement);
    return statement;
  }

  /** Called once the statement has settled, whatever it did. */
  settle(statement: Statement, outcome: StatementOutcome): void {
    if (statement.outcome) return;
    statement.outcome = outcome;
    while (this.issued.length > 0 && this.issued[0].outcome) {
      const applied = this.issued.shift()!;
      this.apply(applied.outcome!);
      applied.applied?.();
    }
  }

  /**
   * Resolves once every statement issued so far has been applied: what a read of the log would see, since it
   * would queue on the session behind them. A commit's notification can arrive before its statement's result
   * (the engine announces while it still returns the rows): a reader woken by it waits here for that result
   * instead of finding nothing and trying again later. Null when nothing is outstanding.
   */
  settled(): Promise<void> | null {
    const newest = this.issued[this.issued.length - 1];
    if (!newest) return null;
    return new Promise<void>((resolve) => {
      const earlier = newest.applied;
      newest.applied = earlier ? () => (earlier(), resolve()) : resolve;
    });
  }

  /**
   * The store's readAll, when it can be answered here: the same events, `next` and `caughtUp` a read of the
   * log would give at this moment (`next` may stop lower when caught up: at the first transaction after the
   * newest event here, which no later event precedes). Null when `from` lies before what is held.
   */
  read(from: LogPosition, options: ReadAllOptions): ReadAllResult | null {
    if (!this.anchor || comparePositions(from, this.anchor) < 0) return null;
    const types = options.types ? new Set(options.types) : null;
    const picked: CommittedEvent[] = [];
    for (let i = this.firstAfter(from); i < this.events.length && picked.length < options.limit; i++) {
      const event = this.events[i];
      if (types && !types.has(event.type)) continue;
      if (options.streamId !== undefined && event.streamId !== options.streamId) continue;
      picked.push(event);
    }
    const caughtUp = picked.length < options.limit;
    const last = picked[picked.length - 1];
    let next: LogPosition = last ? { transactionId: last.transactionId, globalPosition: last.globalPosition } : from;
    if (caughtUp) {
      const newest = this.events[this.events.length - 1];
      const horizon = newest && newest.transactionId >= this.anchor.transactionId ? newest.transactionId + 1n : this.anchor.transactionId;
      if (horizon > next.transactionId) next = { transactionId: horizon, globalPosition: 0 };
    }
    return { events: this.recorded(picked), next, caughtUp };
  }

  private apply(outcome: StatementOutcome): void {
    switch (outcome.kind) {
      case 'nothing':
        return;
      case 'unknown':
        this.forget();
        return;
      case 'read':
        // Already anchored: the held events stay complete from there. Otherwise everything after the horizon
        // the read saw is committed by statements issued after it, which all settle here.
        if (!this.anchor) this.anchor = outcome.horizon;
        return;
      case 'committed':
        if (!this.anchor) return;
        for (const event of outcome.events) {
          const newest = this.events[this.events.length - 1] ?? this.anchor;
          // Never out of order: the tail would rather forget than hand a reader a position it could skip past.
          if (comparePositions(event, newest) <= 0) {
            if (comparePositions(event, this.anchor) <= 0) continue; // before the anchor: read from the log already
            this.forget();
            return;
          }
          this.events.push(event);
        }
        if (this.events.length > this.capacity) this.trim();
    }
  }

  /** Drops the older half: everything after the last event dropped is still held. */
  private trim(): void {
    const dropped = this.events.length - Math.floor(this.capacity / 2);
    const last = this.events[dropped - 1];
    this.anchor = { transactionId: last.transactionId, globalPosition: last.globalPosition };
    this.events = this.events.slice(dropped);
  }

  private forget(): void {
    this.anchor = null;
    this.events = [];
  }

  /** The index of the first held event after `from` (binary search: the events are in log order). */
  private firstAfter(from: LogPosition): number {
    let low = 0;
    let high = this.events.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (comparePositions(this.events[middle], from) <= 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /**
   * The events as the store's reads return them, with payloads parsed afresh for every read (as a read of the
   * log gives each reader objects of its own): what the log stores is exactly what JSON.parse makes of the
   * text the append sent, apart from the order of keys, which jsonb does not keep and nothing depends on.
   */
  private recorded(events: readonly CommittedEvent[]): RecordedEvent[] {
    const documents = new Map<Buffer, StoredEvent[]>();
    return events.map((event) => {
      let parsed = documents.get(event.document);
      if (!parsed) documents.set(event.document, (parsed = (JSON.parse(event.document.toString('utf8')) as { e: StoredEvent[] }).e));
      const stored = parsed[event.index];
      const { schemaVersion, data } = this.upcast(event.type, stored.v, stored.d);
      return {
        globalPosition: event.globalPosition,
        transactionId: event.transactionId,
        streamId: event.streamId,
        streamVersion: event.streamVersion,
        eventId: event.eventId,
        type: event.type,
        schemaVersion,
        data,
        metadata: (stored.m ?? {}) as RecordedEvent['metadata'],
        recordedAt: new Date(event.recordedAt),
        stored: { schemaVersion: stored.v, data: stored.d, recordedAt: event.recordedAt },
      };
    });
  }
}
