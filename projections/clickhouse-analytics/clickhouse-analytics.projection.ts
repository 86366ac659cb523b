import { comparePositions, type DurableProjection, type LogPosition, parseXid8, projectionCheckpoints, type RecordedEvent, type SqlExecutor, uuidv7 } from '../../src/kernel/index.js';
import { Logger } from '@nestjs/common';
import { type AttemptFinished, type Recorded, type RequestServedFromCache, recorded } from '../../events/index.js';
import { type AnalyticsFaults, NO_FAULTS } from './analytics-faults.js';
import { ATTEMPT_COLUMNS, attemptLine } from './attempt-row.js';
import { CACHE_HIT_COLUMNS, cacheHitLine } from './cache-hit-row.js';
import type { ClickHouseConnection } from './clickhouse-connection.js';
import { migrateClickHouse } from './clickhouse-migrator.js';

/** Every insert of this projection runs under a query id with this prefix (see `waitForInFlightInserts`). */
export const INSERT_QUERY_PREFIX = 'switchyard-analytics-';

const IN_FLIGHT_WAIT_MS = 30_000;

type RawTableName = 'attempts' | 'cache_hits';

/** A raw table this projection writes: which of a page's events feed it, and how an event becomes a line. */
interface RawTable<E extends Recorded> {
  table: RawTableName;
  columns: readonly string[];
  /** The page's events of this table's type, narrowed by `type` so `line` gets their payload. */
  of(events: readonly Recorded[]): E[];
  line(event: E): string;
}

const ATTEMPTS: RawTable<Recorded<AttemptFinished>> = {
  table: 'attempts', columns: ATTEMPT_COLUMNS, of: (events) => events.filter((event) => event.type === 'AttemptFinished'), line: attemptLine,
};
const CACHE_HITS: RawTable<Recorded<RequestServedFromCache>> = {
  table: 'cache_hits', columns: CACHE_HIT_COLUMNS, of: (events) => events.filter((event) => event.type === 'RequestServedFromCache'), line: cacheHitLine,
};
const RAW_TABLES = [ATTEMPTS, CACHE_HITS] as const;

/** Every table a rebuild empties: the raw tables and the rollups their materialized views feed. */
const TABLES = ['attempts', 'spend_hourly', 'spend_daily', 'cache_hits', 'cache_savings_hourly', 'cache_savings_daily'];

/**
 * ClickHouse analytics (DESIGN §5): one `attempts` row per AttemptFinished and one `cache_hits` row per
 * RequestServedFromCache; the materialized views keep spend_hourly / spend_daily and
 * cache_savings_hourly / cache_savings_daily. The checkpoint lives in PostgreSQL and cannot commit with
 * the inserts, so exactly-once rests on three facts:
 *  - one writer at a time (the runner's lease), and each insert is one block into one partition of one
 *    table, which ClickHouse commits as a single part — all of it or none;
 *  - the rows carry their log position, so each raw table itself records how far it got (its high-water
 *    mark; one per table, because a batch is two inserts and a crash may fall between them), and after
 *    any doubt (start, a new lease, a rebuild, a failed insert) the writer re-reads them and skips, per
 *    table, everything at or below its mark;
 *  - before re-reading, it waits until no insert of a previous writer is still running.
 * A crash between an insert and the checkpoint therefore replays the batch into marks that already cover
 * it: nothing reaches the views twice. README "ClickHouse: exactly once" has the whole argument.
 */
export class ClickHouseAnalyticsProjection implements DurableProjection {
  readonly name = 'clickhouse-analytics';
  readonly eventTypes = ['AttemptFinished', 'RequestServedFromCache'] as const;
  private readonly logger = new Logger('ClickHouseAnalytics');
  /** Per raw table. Undefined: not known, read them from ClickHouse before the next insert. Null: the table is empty. */
  private highWater: Map<RawTableName, LogPosition | null> | undefined = undefined;
  private migrated = false;

  constructor(
    private readonly clickhouse: ClickHouseConnection,
    private readonly faults: AnalyticsFaults = NO_FAULTS,
  ) {}

  /** Applies the ClickHouse migrations; the gateway calls it at start, `handle` again if that failed. */
  async prepare(): Promise<void> {
    if (this.migrated) return;
    const applied = await migrateClickHouse(this.clickhouse);
    if (applied.length) this.logger.log(`applied ClickHouse migrations in ${this.clickhouse.database}: ${applied.join(', ')}`);
    this.migrated = true;
  }

  async resume(): Promise<void> {
    this.highWater = undefined;
  }

  async handle(_manager: SqlExecutor, events: readonly RecordedEvent[]): Promise<void> {
    await this.prepare();
    if (this.highWater === undefined) this.highWater = await this.readHighWaters();
    const marks = this.highWater;
    const all = recorded(events);
    // A call per table rather than a loop over RAW_TABLES: each call's table has one event type, which is
    // what lets its events reach its `line` typed.
    await this.insertFresh(ATTEMPTS, all, marks);
    await this.insertFresh(CACHE_HITS, all, marks);
  }

  /** Inserts the events of `raw`'s type above its high-water mark, one insert per calendar month, and moves the mark. */
  private async insertFresh<E extends Recorded>(raw: RawTable<E>, events: readonly Recorded[], marks: Map<RawTableName, LogPosition | null>): Promise<void> {
    const mark = marks.get(raw.table) ?? null;
    const ofTable = raw.of(events);
    const fresh = mark ? ofTable.filter((event) => comparePositions(positionOf(event), mark) > 0) : ofTable;
    for (const run of monthRuns(fresh)) {
      try {
        await this.clickhouse.insertTabSeparated(raw.table, raw.columns, run.map(raw.line), `${INSERT_QUERY_PREFIX}${uuidv7()}`);
      } catch (error) {
        // The insert may still have happened (a timeout, a lost answer): only ClickHouse knows now.
        this.highWater = undefined;
        throw error;
      }
      marks.set(raw.table, positionOf(run[run.length - 1]));
      this.faults.afterInsert();
    }
  }

  /**
   * Truncates the tables for a rebuild. The checkpoint row is locked first: a writer on another node holds
   * that lock for the whole of its step, so no insert of a batch read before the reset can land after it.
   */
  async reset(manager: SqlExecutor): Promise<void> {
    await projectionCheckpoints.lock(manager, this.name);
    await this.prepare();
    await this.waitForInFlightInserts();
    for (const table of TABLES) await this.clickhouse.command(`TRUNCATE TABLE ${this.clickhouse.table(table)}`);
    this.highWater = undefined;
  }

  /** Each raw table's high-water mark, read once no insert of an earlier writer is running. */
  private async readHighWaters(): Promise<Map<RawTableName, LogPosition | null>> {
    await this.waitForInFlightInserts();
    const marks = new Map<RawTableName, LogPosition | null>();
    for (const raw of RAW_TABLES) marks.set(raw.table, await this.newestIn(raw.table));
    return marks;
  }

  /** The position of the newest row in a raw table: every event of its type at or before it is already there. */
  private async newestIn(table: RawTableName): Promise<LogPosition | null> {
    // Aliases must not shadow the columns: ClickHouse (like PostgreSQL) would sort by the string.
    const rows = await this.clickhouse.rows<{ mark_transaction: string; mark_position: string }>(
      `SELECT toString(transaction_id) AS mark_transaction, toString(global_position) AS mark_position
       FROM ${this.clickhouse.table(table)}
       ORDER BY transaction_id DESC, global_position DESC LIMIT 1`,
    );
    return rows[0] ? { transactionId: parseXid8(rows[0].mark_transaction), globalPosition: Number(rows[0].mark_position) } : null;
  }

  /** A writer that died mid-insert may have left its insert running on the server: let it finish first. */
  private async waitForInFlightInserts(): Promise<void> {
    const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
    for (;;) {
      const rows = await this.clickhouse.rows<{ running: string }>(
        `SELECT toString(count()) AS running FROM system.processes WHERE query_id LIKE '${INSERT_QUERY_PREFIX}%'`,
      );
      if (Number(rows[0]?.running ?? 0) === 0) return;
      if (Date.now() > deadline) throw new Error('an earlier analytics insert is still running on ClickHouse; retrying later');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function positionOf(event: Pick<RecordedEvent, 'transactionId' | 'globalPosition'>): LogPosition {
  return { transactionId: event.transactionId, globalPosition: event.globalPosition };
}

/** Consecutive events of one calendar month (UTC): each run is one insert into one partition. */
function monthRuns<E extends Pick<RecordedEvent, 'recordedAt'>>(events: readonly E[]): E[][] {
  const runs: E[][] = [];
  let month = '';
  for (const event of events) {
    const current = event.recordedAt.toISOString().slice(0, 7);
    if (current !== month || runs.length === 0) {
      runs.push([]);
      month = current;
    }
    runs[runs.length - 1].push(event);
  }
  return runs;
}
