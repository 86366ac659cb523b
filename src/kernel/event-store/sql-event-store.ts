import { uuidv7 } from '../ids.js';
import { type Database, type SqlExecutor, UNIQUE_VIOLATION, sqlErrorCode } from '../database/database.js';
import { IdempotencyConflictError, WrongExpectedVersionError } from './errors.js';
import {
  type AppendRequest,
  type AppendResult,
  EVENTS_CHANNEL,
  type EventStore,
  type LogPosition,
  type NewEvent,
  type ReadAllOptions,
  type ReadAllResult,
  type RecordedEvent,
} from './event-store.js';

/** Brings an old payload to the latest schema of its type (see events/upcasters). */
export type Upcaster = (type: string, schemaVersion: number, data: unknown) => { schemaVersion: number; data: unknown };

const identityUpcaster: Upcaster = (_type, schemaVersion, data) => ({ schemaVersion, data });

interface EventRow {
  global_position: string | number;
  transaction_id: string;
  stream_id: string;
  stream_version: number;
  event_id: string;
  event_type: string;
  schema_version: number;
  data: unknown;
  metadata: Record<string, unknown>;
  recorded_at: Date | string;
}

type PreparedEvent = NewEvent & { eventId: string };
type PreparedRequest = Omit<AppendRequest, 'events'> & { events: PreparedEvent[] };

const COLUMNS = `global_position, transaction_id::text AS transaction_id, stream_id, stream_version, event_id::text AS event_id,
  event_type, schema_version, data, metadata, recorded_at`;

/**
 * The PostgreSQL event store. Both adapters (pg and PGlite) run this same SQL.
 * `appendMany` is the one write path: a control-plane command appends a batch of one, the data plane's
 * group committer appends many requests in one transaction; one bad request fails only itself.
 */
export class SqlEventStore implements EventStore {
  constructor(
    private readonly database: Database,
    private readonly upcaster: Upcaster = identityUpcaster,
  ) {}

  async append(request: AppendRequest): Promise<AppendResult> {
    const [result] = await this.appendMany([request]);
    if (result instanceof Error) throw result;
    return result;
  }

  /**
   * Appends every request; each entry of the result is its request's outcome. The common case is one
   * statement (one round trip, its own transaction): version checks, the multi-row insert and the commit
   * notification together. Anything unusual — a stream twice in the batch, a version conflict, an
   * idempotent re-append, a unique violation from a concurrent writer — goes to the careful path, one
   * transaction per request, so one bad request fails only itself.
   */
  async appendMany(requests: readonly AppendRequest[]): Promise<Array<AppendResult | Error>> {
    const prepared: PreparedRequest[] = requests.map((request) => ({
      ...request,
      events: request.events.map((event) => ({ ...event, eventId: event.eventId ?? uuidv7() })),
    }));
    const results: Array<AppendResult | Error | null> = prepared.map(() => null);
    // The first request of each stream goes in the single statement; a second one for the same stream
    // (it must see the first one's versions) waits for the careful path.
    const seen = new Set<string>();
    const fast = prepared.filter((request) => {
      if (seen.has(request.streamId)) return false;
      seen.add(request.streamId);
      return request.events.length > 0;
    });
    // A concurrent writer that took a (stream, version) fails the whole statement; the error names the
    // stream, so that request moves to the careful path and the rest retry together.
    let pending = fast;
    for (let round = 0; pending.length > 0 && round < 4; round++) {
      try {
        const outcome = await this.appendInOneStatement(pending);
        for (const request of pending) results[prepared.indexOf(request)] = outcome.get(request.streamId) ?? null;
        break;
      } catch (error) {
        const taken = sqlErrorCode(error) === UNIQUE_VIOLATION ? conflictingStream(error) : null;
        if (!taken || !pending.some((request) => request.streamId === taken)) break;
        pending = pending.filter((request) => request.streamId !== taken);
      }
    }
    for (const [index, request] of prepared.entries()) {
      if (results[index] !== null) continue;
      results[index] = await this.database
        .transaction(async (tx) => {
          const [result] = await this.appendInTransaction(tx, [request]);
          if (!(result instanceof Error) && request.events.length > 0) {
            await tx.query(`SELECT pg_notify($1, $2)`, [EVENTS_CHANNEL, notificationPayload([request])]);
          }
          return result;
        })
        .catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
    }
    return results as Array<AppendResult | Error>;
  }

  /**
   * Version check, insert and notify in a single statement for requests on distinct streams. Returns the
   * outcome of each stream whose events were inserted; the others (conflict, re-append) are left out.
   */
  private async appendInOneStatement(requests: readonly PreparedRequest[]): Promise<Map<string, AppendResult>> {
    const reqStreams: string[] = [];
    const reqExpected: number[] = [];
    const reqOrder: number[] = [];
    const evStreams: string[] = [];
    const evOffsets: number[] = [];
    const evIds: string[] = [];
    const evTypes: string[] = [];
    const evSchemas: number[] = [];
    const evData: string[] = [];
    const evMetadata: string[] = [];
    requests.forEach((request, order) => {
      reqStreams.push(request.streamId);
      reqExpected.push(encodeExpected(request.expectedVersion));
      reqOrder.push(order);
      request.events.forEach((event, offset) => {
        evStreams.push(request.streamId);
        evOffsets.push(offset);
        evIds.push(event.eventId);
        evTypes.push(event.type);
        evSchemas.push(event.schemaVersion ?? 1);
        evData.push(JSON.stringify(event.data));
        evMetadata.push(JSON.stringify(event.metadata ?? {}));
      });
    });
    const rows = await this.database.query<{ stream_id: string; stream_version: number; event_id: string; global_position: string | number }>(
      `WITH req AS (
         SELECT * FROM unnest($1::text[], $2::int[], $3::int[]) AS r(stream_id, expected, ord)
       ), cur AS (
         SELECT req.stream_id, req.expected, req.ord,
                coalesce((SELECT max(e.stream_version) FROM events e WHERE e.stream_id = req.stream_id), 0) AS actual
         FROM req
       ), ok AS (
         SELECT * FROM cur
         WHERE expected = -1 OR (expected = -3 AND actual > 0) OR (expected >= 0 AND actual = expected)
       ), ev AS (
         SELECT * FROM unnest($4::text[], $5::int[], $6::uuid[], $7::text[], $8::int2[], $9::jsonb[], $10::jsonb[])
           AS e(stream_id, ofs, event_id, event_type, schema_version, data, metadata)
       ), ins AS (
         INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata)
         SELECT ev.stream_id, ok.actual + ev.ofs + 1, ev.event_id, ev.event_type, ev.schema_version, ev.data, ev.metadata
         FROM ev JOIN ok ON ok.stream_id = ev.stream_id
         ORDER BY ok.ord, ev.ofs
         ON CONFLICT (event_id) DO NOTHING
         RETURNING stream_id, stream_version, event_id::text AS event_id, global_position
       ), notified AS (
         SELECT pg_notify($11, $12) FROM (SELECT 1 FROM ins LIMIT 1) AS any_inserted
       )
       SELECT stream_id, stream_version, event_id, global_position FROM ins
       UNION ALL SELECT NULL, NULL, NULL, NULL FROM notified`,
      [reqStreams, reqExpected, reqOrder, evStreams, evOffsets, evIds, evTypes, evSchemas, evData, evMetadata, EVENTS_CHANNEL, notificationPayload(requests)],
    );
    const byStream = new Map<string, Array<{ version: number; eventId: string; position: number }>>();
    for (const row of rows) {
      if (row.stream_id === null) continue;
      const list = byStream.get(row.stream_id) ?? [];
      list.push({ version: Number(row.stream_version), eventId: row.event_id, position: Number(row.global_position) });
      byStream.set(row.stream_id, list);
    }
    const outcome = new Map<string, AppendResult>();
    for (const request of requests) {
      const inserted = byStream.get(request.streamId);
      // A partial insert (some ids already stored) is left to the careful path, which reports it exactly.
      if (!inserted || inserted.length !== request.events.length) continue;
      const positions = new Map(inserted.map((row) => [row.eventId, row.position]));
      outcome.set(request.streamId, {
        nextExpectedVersion: Math.max(...inserted.map((row) => row.version)),
        positions: request.events.map((event) => positions.get(event.eventId)!),
      });
    }
    return outcome;
  }

  async readStream(streamId: string, fromVersion = 1): Promise<RecordedEvent[]> {
    const rows = await this.database.query<EventRow>(
      `SELECT ${COLUMNS} FROM events WHERE stream_id = $1 AND stream_version >= $2 ORDER BY stream_version`,
      [streamId, fromVersion],
    );
    return rows.map((row) => this.toRecorded(row));
  }

  async readAll(from: LogPosition, options: ReadAllOptions): Promise<ReadAllResult> {
    const params: unknown[] = [from.transactionId, from.globalPosition, options.limit];
    let filters = '';
    if (options.types) {
      params.push(options.types);
      filters += `AND event_type = ANY($${params.length}::text[]) `;
    }
    if (options.streamId !== undefined) {
      params.push(options.streamId);
      filters += `AND stream_id = $${params.length}`;
    }
    // One statement: the snapshot's xmin bounds the read, so a transaction still in flight (even one with
    // a lower global_position) is never skipped; it is read once it commits, after its xmin passes.
    const rows = await this.database.query<EventRow & { horizon: string }>(
      `WITH horizon AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin)
       SELECT horizon.xmin::text AS horizon, page.*
       FROM horizon LEFT JOIN LATERAL (
         SELECT ${COLUMNS} FROM events
         WHERE (transaction_id, global_position) > ($1::text::xid8, $2::bigint)
           AND transaction_id < horizon.xmin ${filters}
         -- The table's columns, not the select list's text renderings: ORDER BY prefers an output name,
         -- and xids as text sort '100000' before '99999'.
         ORDER BY events.transaction_id, events.global_position
         LIMIT $3
       ) page ON true`,
      params,
    );
    const horizon = rows[0]?.horizon ?? from.transactionId;
    const events = rows.filter((row) => row.event_id !== null).map((row) => this.toRecorded(row));
    const caughtUp = events.length < options.limit;
    let next: LogPosition = from;
    if (caughtUp) {
      // Every transaction below the horizon has ended and was read: resume at the horizon itself.
      if (BigInt(horizon) > BigInt(from.transactionId)) next = { transactionId: horizon, globalPosition: 0 };
      const last = events[events.length - 1];
      if (last && BigInt(last.transactionId) >= BigInt(next.transactionId)) {
        next = { transactionId: last.transactionId, globalPosition: last.globalPosition };
      }
    } else {
      const last = events[events.length - 1];
      next = { transactionId: last.transactionId, globalPosition: last.globalPosition };
    }
    return { events, next, caughtUp };
  }

  /** The newest committed global position (for status output). */
  async headPosition(): Promise<number> {
    const rows = await this.database.query<{ head: string | null }>(`SELECT max(global_position)::text AS head FROM events`);
    return Number(rows[0]?.head ?? 0);
  }

  private async appendInTransaction(
    tx: SqlExecutor,
    requests: ReadonlyArray<PreparedRequest>,
  ): Promise<Array<AppendResult | Error>> {
    const streamIds = [...new Set(requests.map((request) => request.streamId))];
    const versionRows = await tx.query<{ stream_id: string; version: number }>(
      `SELECT stream_id, max(stream_version) AS version FROM events WHERE stream_id = ANY($1::text[]) GROUP BY stream_id`,
      [streamIds],
    );
    const current = new Map(versionRows.map((row) => [row.stream_id, Number(row.version)]));
    const results: Array<AppendResult | Error | null> = [];
    const planned: Array<{ index: number; request: (typeof requests)[number]; firstVersion: number }> = [];

    for (const [index, request] of requests.entries()) {
      const actual = current.get(request.streamId) ?? 0;
      if (!versionMatches(request.expectedVersion, actual)) {
        results.push(await this.idempotentOrConflict(tx, request, actual));
        continue;
      }
      if (request.events.length === 0) {
        results.push({ nextExpectedVersion: actual, positions: [] });
        continue;
      }
      planned.push({ index, request, firstVersion: actual + 1 });
      current.set(request.streamId, actual + request.events.length);
      results.push(null);
    }
    if (planned.length === 0) return results as Array<AppendResult | Error>;

    await tx.query('SAVEPOINT append_batch');
    try {
      const positions = await this.insert(tx, planned);
      await tx.query('RELEASE SAVEPOINT append_batch');
      for (const plan of planned) {
        results[plan.index] = {
          nextExpectedVersion: plan.firstVersion + plan.request.events.length - 1,
          positions: plan.request.events.map((event) => positions.get(event.eventId) ?? 0),
        };
      }
    } catch {
      // A concurrent writer or a bad payload broke the batch: retry each request alone so that only
      // the offending request fails.
      await tx.query('ROLLBACK TO SAVEPOINT append_batch');
      for (const plan of planned) results[plan.index] = await this.appendAlone(tx, plan.request);
    }
    return results as Array<AppendResult | Error>;
  }

  private async appendAlone(
    tx: SqlExecutor,
    request: PreparedRequest,
  ): Promise<AppendResult | Error> {
    await tx.query('SAVEPOINT append_one');
    try {
      const rows = await tx.query<{ version: number | null }>(
        `SELECT max(stream_version) AS version FROM events WHERE stream_id = $1`,
        [request.streamId],
      );
      const actual = Number(rows[0]?.version ?? 0);
      if (!versionMatches(request.expectedVersion, actual)) {
        await tx.query('RELEASE SAVEPOINT append_one');
        return await this.idempotentOrConflict(tx, request, actual);
      }
      const positions = await this.insert(tx, [{ request, firstVersion: actual + 1 }]);
      await tx.query('RELEASE SAVEPOINT append_one');
      return {
        nextExpectedVersion: actual + request.events.length,
        positions: request.events.map((event) => positions.get(event.eventId) ?? 0),
      };
    } catch (error) {
      await tx.query('ROLLBACK TO SAVEPOINT append_one');
      if (sqlErrorCode(error) === UNIQUE_VIOLATION) {
        const rows = await tx.query<{ version: number | null }>(
          `SELECT max(stream_version) AS version FROM events WHERE stream_id = $1`,
          [request.streamId],
        );
        return new WrongExpectedVersionError(request.streamId, request.expectedVersion, Number(rows[0]?.version ?? 0));
      }
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  private async insert(
    tx: SqlExecutor,
    planned: ReadonlyArray<{ request: PreparedRequest; firstVersion: number }>,
  ): Promise<Map<string, number>> {
    const streamIds: string[] = [];
    const versions: number[] = [];
    const eventIds: string[] = [];
    const types: string[] = [];
    const schemaVersions: number[] = [];
    const data: string[] = [];
    const metadata: string[] = [];
    for (const { request, firstVersion } of planned) {
      request.events.forEach((event, offset) => {
        streamIds.push(request.streamId);
        versions.push(firstVersion + offset);
        eventIds.push(event.eventId);
        types.push(event.type);
        schemaVersions.push(event.schemaVersion ?? 1);
        data.push(JSON.stringify(event.data));
        metadata.push(JSON.stringify(event.metadata ?? {}));
      });
    }
    // ON CONFLICT (event_id) only: a duplicate id is an idempotent no-op, while a taken
    // (stream_id, stream_version) still raises and is reported as a version conflict.
    const rows = await tx.query<{ event_id: string; global_position: string | number }>(
      `INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata)
       SELECT * FROM unnest($1::text[], $2::int[], $3::uuid[], $4::text[], $5::int2[], $6::jsonb[], $7::jsonb[])
       ON CONFLICT (event_id) DO NOTHING
       RETURNING event_id::text AS event_id, global_position`,
      [streamIds, versions, eventIds, types, schemaVersions, data, metadata],
    );
    const positions = new Map(rows.map((row) => [row.event_id, Number(row.global_position)]));
    const missing = eventIds.filter((id) => !positions.has(id));
    if (missing.length > 0) {
      const stored = await tx.query<{ event_id: string; global_position: string | number }>(
        `SELECT event_id::text AS event_id, global_position FROM events WHERE event_id = ANY($1::uuid[])`,
        [missing],
      );
      for (const row of stored) positions.set(row.event_id, Number(row.global_position));
    }
    return positions;
  }

  private async idempotentOrConflict(
    tx: SqlExecutor,
    request: PreparedRequest,
    actual: number,
  ): Promise<AppendResult | Error> {
    const ids = request.events.map((event) => event.eventId);
    const stored = ids.length
      ? await tx.query<{ event_id: string; global_position: string | number; stream_id: string; stream_version: number }>(
          `SELECT event_id::text AS event_id, global_position, stream_id, stream_version FROM events WHERE event_id = ANY($1::uuid[])`,
          [ids],
        )
      : [];
    if (stored.length === 0) return new WrongExpectedVersionError(request.streamId, request.expectedVersion, actual);
    if (stored.length !== ids.length || stored.some((row) => row.stream_id !== request.streamId)) {
      return new IdempotencyConflictError(request.streamId);
    }
    const byId = new Map(stored.map((row) => [row.event_id, row]));
    return {
      nextExpectedVersion: Math.max(...stored.map((row) => Number(row.stream_version))),
      positions: ids.map((id) => Number(byId.get(id)!.global_position)),
    };
  }

  private toRecorded(row: EventRow): RecordedEvent {
    const { schemaVersion, data } = this.upcaster(row.event_type, Number(row.schema_version), row.data);
    return {
      globalPosition: Number(row.global_position),
      transactionId: row.transaction_id,
      streamId: row.stream_id,
      streamVersion: Number(row.stream_version),
      eventId: row.event_id,
      type: row.event_type,
      schemaVersion,
      data,
      metadata: row.metadata ?? {},
      recordedAt: row.recorded_at instanceof Date ? row.recorded_at : new Date(row.recorded_at),
    };
  }
}

/** The stream named by a primary-key violation's detail: `Key (stream_id, stream_version)=(s, 3) already exists.` */
function conflictingStream(error: unknown): string | null {
  const detail = (error as { detail?: string })?.detail ?? '';
  const match = /^Key \(stream_id, stream_version\)=\((.*), \d+\) already exists/.exec(detail);
  return match ? match[1] : null;
}

/** Expected versions as integers for SQL: -1 any, -3 stream-exists, n ≥ 0 exact (no-stream = 0). */
function encodeExpected(expected: AppendRequest['expectedVersion']): number {
  if (expected === 'any') return -1;
  if (expected === 'stream-exists') return -3;
  if (expected === 'no-stream') return 0;
  return expected;
}

/** The committed event types, so that subscribers following other types stay asleep ('' = wake all). */
function notificationPayload(requests: readonly PreparedRequest[]): string {
  const types = [...new Set(requests.flatMap((request) => request.events.map((event) => event.type)))].join(',');
  return types.length <= 7000 ? types : '';
}

function versionMatches(expected: AppendRequest['expectedVersion'], actual: number): boolean {
  if (expected === 'any') return true;
  if (expected === 'no-stream') return actual === 0;
  if (expected === 'stream-exists') return actual > 0;
  return expected === actual;
}
