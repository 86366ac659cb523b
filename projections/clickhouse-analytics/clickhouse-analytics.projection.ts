import { comparePositions, type DurableProjection, type FailureKind, type LogPosition, parseXid8, type ProjectionReplacement, type RecordedEvent, type SqlExecutor, uuidv7 } from '../../src/kernel/index.js';
import { ClickHouseError } from '@clickhouse/client';
import { Logger } from '@nestjs/common';
import { type AttemptFinished, type Recorded, type RequestServedFromCache, recorded } from '../../events/index.js';
import { type AnalyticsFaults, NO_FAULTS } from './analytics-faults.js';
import { ATTEMPT_COLUMNS, attemptLine } from './attempt-row.js';
import { CACHE_HIT_COLUMNS, cacheHitLine } from './cache-hit-row.js';
import { type ClickHouseConnection, quoteString } from './clickhouse-connection.js';
import { createRebuildTables, migrateClickHouse } from './clickhouse-migrator.js';

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

/** Every table a rebuild replaces: the raw tables and the rollups their materialized views feed. */
const TABLES = ['attempts', 'spend_hourly', 'spend_daily', 'cache_hits', 'cache_savings_hourly', 'cache_savings_daily'];

/** A rebuild's tables and views: the live ones' names with this suffix (README "Rebuilding aside"). */
const REBUILD_SUFFIX = '__rebuild';
/** The live tables a rebuild's swap set aside, until they are dropped. */
const REPLACED_SUFFIX = '__replaced';

/**
 * ClickHouse errors that say the inserted text is wrong (a value that does not parse or does not fit its
 * column), so the same events would fail the same way: the projection halts at the event instead of retrying.
 * CANNOT_PARSE_TEXT, CANNOT_PARSE_QUOTED_STRING, CANNOT_PARSE_INPUT_ASSERTION_FAILED (a number such as 1e+308
 * in an integer column), CANNOT_PARSE_DATE(TIME), TYPE_MISMATCH, ARGUMENT_OUT_OF_BOUND (a decimal too big),
 * CANNOT_CONVERT_TYPE, CANNOT_PARSE_NUMBER, INCORRECT_DATA, DECIMAL_OVERFLOW. Every other server error (too
 * many parts, memory, a table being altered) and every network error is retried.
 */
const DATA_ERROR_CODES = new Set(['6', '26', '27', '38', '41', '53', '69', '70', '72', '117', '407']);

/** An event this projection cannot turn into a row (a cost that is not a number): it fails the same way every time. */
class MalformedAnalyticsEvent extends Error {
  override readonly name = 'MalformedAnalyticsEvent';
}

/** An insert the ClickHouse server refused, with its error code (`code`, as a SQLSTATE would be, for the halt's record). */
class ClickHouseInsertError extends Error {
  override readonly name = 'ClickHouseInsertError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The server's error code of a failed statement: the client parses it from current releases' answers
 * (`Code: 27. DB::Exception: …`); 18.16's (`Code: 27, e.displayText() = DB::Exception: …`) it passes on as a
 * plain error, so the message is read too. Null for a failure without one (the network, a timeout).
 */
function serverErrorCode(error: unknown): string | null {
  if (error instanceof ClickHouseError) return error.code;
  const match = error instanceof Error ? /^Code: (\d+)[.,]/.exec(error.message) : null;
  return match ? match[1] : null;
}

export interface AnalyticsTables {
  /** Appended to every table name this instance writes and reads: '' live, REBUILD_SUFFIX for a rebuild's replay. */
  suffix: string;
}

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
    private readonly tables: AnalyticsTables = { suffix: '' },
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
      const lines = run.map((event) => {
        try {
          return raw.line(event);
        } catch (error) {
          throw new MalformedAnalyticsEvent(`event ${event.eventId} at global position ${event.globalPosition}: ${(error as Error).message}`);
        }
      });
      try {
        await this.clickhouse.insertTabSeparated(`${raw.table}${this.tables.suffix}`, raw.columns, lines, `${INSERT_QUERY_PREFIX}${uuidv7()}`);
      } catch (error) {
        // The insert may still have happened (a timeout, a lost answer): only ClickHouse knows now.
        this.highWater = undefined;
        const code = serverErrorCode(error);
        throw code ? new ClickHouseInsertError(code, (error as Error).message) : error;
      }
      marks.set(raw.table, positionOf(run[run.length - 1]));
      this.faults.afterInsert();
    }
  }

  /** Data errors halt the projection at the event; everything else ClickHouse or the network says is retried. */
  classify(error: unknown): FailureKind {
    if (error instanceof MalformedAnalyticsEvent) return 'deterministic';
    if (error instanceof ClickHouseInsertError) return DATA_ERROR_CODES.has(error.code) ? 'deterministic' : 'transient';
    return 'transient';
  }

  /**
   * A rebuild replays into tables of its own — `attempts__rebuild` and the rest, with views of their own
   * feeding their rollups (the schema steps run again under those names) — while the live tables keep
   * serving and taking inserts. The swap, inside the PostgreSQL transaction that holds the live checkpoint's
   * lock (so no live insert is running: the writer holds that lock for its whole step), drops the
   * replacement's views and renames the six tables into place in one RENAME; the live views select from
   * and write to their tables by name, so they feed the renamed ones from then on. If that transaction then
   * fails to commit, ClickHouse holds the replacement, whose rows reach further than the live checkpoint, and
   * the high-water marks skip what it already holds: no row twice, none missing.
   */
  replacement(): ProjectionReplacement {
    const clickhouse = this.clickhouse;
    const dropAside = () => this.dropTablesEndingWith([REBUILD_SUFFIX, REPLACED_SUFFIX]);
    return {
      projection: new ClickHouseAnalyticsProjection(clickhouse, NO_FAULTS, { suffix: REBUILD_SUFFIX }),
      tables: [],
      create: async () => {
        await this.prepare();
        await dropAside();
        await createRebuildTables(clickhouse, REBUILD_SUFFIX);
      },
      swap: async () => {
        await this.waitForInFlightInserts();
        await this.dropTablesEndingWith([REBUILD_SUFFIX], 'MaterializedView');
        const pairs = TABLES.flatMap((table) => [
          `${clickhouse.table(table)} TO ${clickhouse.table(table + REPLACED_SUFFIX)}`,
          `${clickhouse.table(table + REBUILD_SUFFIX)} TO ${clickhouse.table(table)}`,
        ]);
        await clickhouse.command(`RENAME TABLE ${pairs.join(', ')}`);
        this.highWater = undefined;
      },
      discard: dropAside,
    };
  }

  /** Drops this database's tables (views first) whose names end with one of the suffixes. */
  private async dropTablesEndingWith(suffixes: readonly string[], engine?: string): Promise<void> {
    const rows = await this.clickhouse.rows<{ name: string; engine: string }>(
      `SELECT name, engine FROM system.tables WHERE database = ${quoteString(this.clickhouse.database)}`,
    );
    const doomed = rows.filter((row) => suffixes.some((suffix) => row.name.endsWith(suffix)) && (!engine || row.engine === engine))
      .sort((a, b) => Number(b.engine === 'MaterializedView') - Number(a.engine === 'MaterializedView'));
    for (const row of doomed) await this.clickhouse.command(`DROP TABLE IF EXISTS ${this.clickhouse.table(row.name)}`);
  }

  /** Each raw table's high-water mark, read once no insert of an earlier writer is running. */
  private async readHighWaters(): Promise<Map<RawTableName, LogPosition | null>> {
    await this.waitForInFlightInserts();
    const marks = new Map<RawTableName, LogPosition | null>();
    for (const raw of RAW_TABLES) marks.set(raw.table, await this.newestIn(`${raw.table}${this.tables.suffix}`));
    return marks;
  }

  /** The position of the newest row in a raw table: every event of its type at or before it is already there. */
  private async newestIn(table: string): Promise<LogPosition | null> {
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
