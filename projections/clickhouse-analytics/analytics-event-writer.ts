import type { AttemptFinished, Recorded, RequestServedFromCache } from '../../events/index.js';
import { ClickHouseError } from '@clickhouse/client';
import { ATTEMPT_COLUMNS, type RowValues, attemptValues, dateTime } from './attempt-row.js';
import { CACHE_HIT_COLUMNS, cacheHitValues } from './cache-hit-row.js';
import { type ClickHouseConnection, quoteString } from './clickhouse-connection.js';
import { migrateClickHouse } from './clickhouse-migrator.js';

/**
 * Inserts of the broker-fed writer run under `<prefix><event id>`: ClickHouse refuses a second query with the
 * id of one still running (QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING), which is what serializes two deliveries
 * of one event. Distinct from the in-process projection's prefix, whose in-flight wait must not see these.
 */
export const CONSUMER_INSERT_PREFIX = 'switchyard-consume-analytics-';

/** ClickHouse's code for "a query with this id is already running". */
const QUERY_ALREADY_RUNNING = '216';

export type AnalyticsEvent = Recorded<AttemptFinished> | Recorded<RequestServedFromCache>;

/** The same event is being inserted right now by another delivery: try again once that insert is over. */
export class AnalyticsInsertInProgress extends Error {
  override readonly name = 'AnalyticsInsertInProgress';
}

/**
 * The analytics rows of events that arrive one at a time, in any order, possibly more than once, from
 * several processes at once (`switchyard consume clickhouse-analytics` behind a broker's consumer group).
 * The in-process projection's high-water marks need one writer reading the log in order; here exactly-once
 * rests on the event id instead, with one statement per event:
 *
 *   INSERT INTO attempts (…) SELECT … WHERE event_id NOT IN (SELECT event_id FROM attempts WHERE <its key>)
 *
 * run under the query id `CONSUMER_INSERT_PREFIX + eventId`. Check and insert are one query, and ClickHouse
 * (one server) runs at most one query of a given id at a time: a second delivery of the event either is
 * refused while the first is running (AnalyticsInsertInProgress: the message goes back to the broker), or runs
 * after it and finds its row. An insert is one block into one partition, so all of the row lands or none;
 * the materialized views (spend and savings rollups) fire only for rows actually inserted. ClickHouse 18.16
 * has no insert deduplication tokens; this works there and on current releases.
 */
export class AnalyticsEventWriter {
  private columnTypes: Map<string, string> | null = null;

  constructor(private readonly clickhouse: ClickHouseConnection) {}

  /** Applies the ClickHouse migrations and reads the tables' column types (the literals are cast to them). */
  async prepare(): Promise<void> {
    if (this.columnTypes) return;
    await migrateClickHouse(this.clickhouse);
    const rows = await this.clickhouse.rows<{ table: string; name: string; type: string }>(
      `SELECT table, name, type FROM system.columns WHERE database = ${quoteString(this.clickhouse.database)} AND table IN ('attempts', 'cache_hits')`,
    );
    this.columnTypes = new Map(rows.map((row) => [`${row.table}.${row.name}`, row.type]));
  }

  /** Writes the event's row unless the table already holds it. Resolves once ClickHouse has it. */
  async write(event: AnalyticsEvent): Promise<void> {
    await this.prepare();
    const [table, columns, values] = event.type === 'AttemptFinished'
      ? ['attempts', ATTEMPT_COLUMNS, attemptValues(event)] as const
      : ['cache_hits', CACHE_HIT_COLUMNS, cacheHitValues(event)] as const;
    const statement = this.insertIfAbsent(table, columns, values, event);
    try {
      await this.clickhouse.command(statement, `${CONSUMER_INSERT_PREFIX}${event.eventId}`);
    } catch (error) {
      if (serverErrorCode(error) === QUERY_ALREADY_RUNNING) {
        throw new AnalyticsInsertInProgress(`event ${event.eventId} is being inserted by another delivery`, { cause: error });
      }
      throw error;
    }
  }

  private insertIfAbsent(table: string, columns: readonly string[], values: RowValues, event: AnalyticsEvent): string {
    const selected = columns.map((column, i) => `CAST(${literal(values[i])} AS ${this.typeOf(table, column)}) AS ${column}`);
    // The sorting key's prefix (tenant, second) narrows the lookup to a few granules; event_id decides.
    const sameEvent = `tenant_id = ${quoteString(event.data.tenantId)} AND recorded_at = toDateTime(${quoteString(dateTime(event.recordedAt))}, 'UTC')` +
      ` AND event_id = ${quoteString(event.eventId)}`;
    return `INSERT INTO ${this.clickhouse.table(table)} (${columns.join(', ')})
      SELECT ${columns.join(', ')} FROM (SELECT ${selected.join(', ')})
      WHERE event_id NOT IN (SELECT event_id FROM ${this.clickhouse.table(table)} WHERE ${sameEvent})`;
  }

  private typeOf(table: string, column: string): string {
    const type = this.columnTypes?.get(`${table}.${column}`);
    if (!type) throw new Error(`ClickHouse table ${this.clickhouse.database}.${table} has no column ${column}: are its migrations applied?`);
    return type;
  }
}

/** A value as a ClickHouse literal; numbers go as text and are CAST to the column's type like the rest. */
function literal(value: string | number | null): string {
  if (value === null) return 'NULL';
  return quoteString(String(value));
}

function serverErrorCode(error: unknown): string | null {
  if (error instanceof ClickHouseError) return error.code;
  const match = error instanceof Error ? /^Code: (\d+)[.,]/.exec(error.message) : null;
  return match ? match[1] : null;
}
