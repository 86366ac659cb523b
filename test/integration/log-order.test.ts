import pg from 'pg';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LogPosition, type RecordedEvent, START } from '../../src/kernel/event-store/event-store.js';
import { uuidv7 } from '../../src/kernel/ids.js';
import { ProjectionRunner } from '../../src/kernel/projections/projection-runner.js';
import { type StoreFixture, describeOnPostgres, openStore, storeTargets } from '../support/event-store-targets.js';
import { OwnPostgres, ownPostgresAvailable } from '../support/own-postgres.js';
import { LoggingProjection, RecordingProjection } from '../support/recording-projections.js';
import { burnTransactionIdsUntil, nextTransactionId } from '../support/transaction-ids.js';
import { createScratchDatabase, requireService } from '../support/services.js';

/**
 * The global order (DESIGN §4) is (transaction_id, global_position), both numeric. These suites push
 * transaction ids across powers of ten — where a text comparison ('10000' < '9999') reorders and skips —
 * and check every reader: readAll at every page size, the projection runner live, after a restart from
 * a checkpoint below the boundary, and a rebuild.
 */

interface Appended {
  eventId: string;
  type: 'Marker' | 'Other';
}

/** A store plus a runner with one in-memory and one durable recording projection, driven by catchUp only. */
interface Session {
  fixture: StoreFixture;
  runner: ProjectionRunner;
  memory: RecordingProjection;
  durable: LoggingProjection;
}

async function openSession(url: string | null, dataDir: string | null, batchSize = 2): Promise<Session> {
  const fixture = await openStore(url, dataDir);
  await LoggingProjection.createTable(fixture.database);
  const runner = new ProjectionRunner(fixture.store, fixture.database, {
    pollIntervalMs: 3_600_000, // only catchUp moves the projections, so the test decides when pages are read
    listen: false,
    batchSize,
    runDurable: true,
  });
  const memory = new RecordingProjection('memory-markers', ['Marker']);
  const durable = new LoggingProjection('durable-markers', ['Marker']);
  runner.addInMemory(memory);
  runner.addDurable(durable);
  await runner.start();
  await runner.catchUp(); // idle from here on: no projection transaction takes a transaction id behind the test's back
  return { fixture, runner, memory, durable };
}

async function closeSession(session: Session): Promise<void> {
  await session.runner.stop();
  await session.fixture.close();
}

/** Reads the whole log with one page size; returns the events of the given types in read order. */
async function readWhole(fixture: StoreFixture, limit: number, types?: string[]): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  let position: LogPosition = START;
  for (let pages = 0; ; pages++) {
    if (pages > 100_000) throw new Error('readAll did not reach the end');
    const page = await fixture.store.readAll(position, { limit, types });
    out.push(...page.events);
    position = page.next;
    if (page.caughtUp) return out;
  }
}

/**
 * Six appends, each its own transaction, meant to straddle `boundary` (ids are burnt up to three below it
 * first): Marker and Other alternate, one append carries two events.
 */
async function appendAcross(fixture: StoreFixture, boundary: number, log: Appended[], count = 6): Promise<void> {
  await burnTransactionIdsUntil(fixture.database, boundary - 3);
  for (let i = 0; i < count; i++) {
    const types: Appended['type'][] = i === 2 ? ['Marker', 'Other'] : [i % 2 === 0 ? 'Marker' : 'Other'];
    const events = types.map((type) => ({ eventId: uuidv7(), type, data: { boundary, i }, metadata: { actor: 'test' } }));
    await fixture.store.append({ streamId: `order-${boundary}-${i}-${uuidv7()}`, events, expectedVersion: 'no-stream' });
    log.push(...events.map((event) => ({ eventId: event.eventId, type: event.type })));
  }
}

/** The transaction ids of the given events, to prove a group really straddles its boundary. */
async function transactionIdsOf(fixture: StoreFixture, eventIds: string[]): Promise<number[]> {
  const rows = await fixture.database.query<{ xid: string }>(
    `SELECT transaction_id::text AS xid FROM events WHERE event_id = ANY($1::uuid[]) ORDER BY global_position`,
    [eventIds],
  );
  return rows.map((row) => Number(row.xid));
}

function markers(log: Appended[]): string[] {
  return log.filter((entry) => entry.type === 'Marker').map((entry) => entry.eventId);
}

interface Target {
  name: string;
  boundaries: number[];
  open(): Promise<{ url: string | null; dataDir: string | null }>;
  /** Restarts the store's server (if it has one) while every session is closed; may move the next transaction id forward. */
  restart(nextTransactionId?: number): Promise<void>;
  remove(): Promise<void>;
}

function pgliteTarget(): Target {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-order-'));
  return {
    name: 'PGlite (data directory on disk)',
    boundaries: [1_000, 10_000, 100_000],
    open: async () => ({ url: null, dataDir }),
    restart: async () => undefined, // embedded: closing and reopening the directory is the restart
    remove: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

function ownPostgresTarget(): Target {
  let server: OwnPostgres | null = null;
  return {
    name: 'PostgreSQL (a server of its own)',
    boundaries: [1_000, 10_000, 100_000, 1_000_000],
    open: async () => {
      server ??= await OwnPostgres.create();
      return { url: server.url(), dataDir: null };
    },
    restart: async (next) => {
      await server!.stop();
      if (next !== undefined) await server!.setNextTransactionId(next);
      await server!.start();
    },
    remove: async () => server?.remove(),
  };
}

const targets: Target[] = [pgliteTarget()];
if (ownPostgresAvailable()) targets.push(ownPostgresTarget());

describe.each(targets.map((target) => [target.name, target] as const))('reading order across transaction-id boundaries on %s', (_name, target) => {
  const log: Appended[] = [];
  let session: Session;
  let where: { url: string | null; dataDir: string | null };

  beforeAll(async () => {
    where = await target.open();
    session = await openSession(where.url, where.dataDir);
  }, 60_000);
  afterAll(async () => {
    await closeSession(session).catch(() => undefined);
    await target.remove();
  }, 60_000);

  test('live: projections reading pages of two follow every boundary, each event once, in commit order', async () => {
    const live = target.boundaries.slice(0, -1);
    for (const boundary of live) {
      const before = log.length;
      await appendAcross(session.fixture, boundary, log);
      const xids = await transactionIdsOf(session.fixture, log.slice(before).map((entry) => entry.eventId));
      expect(xids.some((xid) => xid < boundary) && xids.some((xid) => xid >= boundary)).toBe(true);
      await session.runner.catchUp();
      expect(session.memory.eventIds).toEqual(markers(log));
      expect(await LoggingProjection.eventIds(session.fixture.database, 'durable-markers')).toEqual(markers(log));
    }
  }, 60_000);

  test('readAll at every page size, with and without a type filter, returns each event once in commit order', async () => {
    const all = log.map((entry) => entry.eventId);
    for (const limit of [1, 2, 3, 5, 7, 1000]) {
      expect((await readWhole(session.fixture, limit)).map((event) => event.eventId)).toEqual(all);
      expect((await readWhole(session.fixture, limit, ['Marker'])).map((event) => event.eventId)).toEqual(markers(log));
    }
    const read = await readWhole(session.fixture, 1000);
    for (let i = 1; i < read.length; i++) {
      // The positions themselves are bigint transaction ids, ordered numerically.
      expect(typeof read[i].transactionId).toBe('bigint');
      expect(read[i].transactionId >= read[i - 1].transactionId).toBe(true);
    }
  }, 60_000);

  test('a restart with the checkpoint below the last boundary resumes across it: nothing skipped, nothing twice', async () => {
    const last = target.boundaries[target.boundaries.length - 1];
    // Half of the last group below the boundary, unread by the durable projection at the restart …
    await closeSession(session);
    await target.restart(target.name.startsWith('PostgreSQL') ? last - 40 : undefined);
    session = await openSession(where.url, where.dataDir);
    const before = log.length;
    await appendAcross(session.fixture, last, log, 3);
    expect((await transactionIdsOf(session.fixture, log.slice(before).map((e) => e.eventId))).every((xid) => xid < last)).toBe(true);
    await closeSession(session);
    // … the other half above it, after the restart.
    await target.restart();
    session = await openSession(where.url, where.dataDir);
    expect(await nextTransactionId(session.fixture.database)).toBeLessThan(last + 100);
    const middle = log.length;
    for (let i = 0; i < 3; i++) {
      const eventId = uuidv7();
      await burnTransactionIdsUntil(session.fixture.database, Math.max(last, await nextTransactionId(session.fixture.database)));
      await session.fixture.store.append({
        streamId: `order-after-${i}-${eventId}`, events: [{ eventId, type: 'Marker', data: { i } }], expectedVersion: 'no-stream',
      });
      log.push({ eventId, type: 'Marker' });
    }
    expect((await transactionIdsOf(session.fixture, log.slice(middle).map((e) => e.eventId))).every((xid) => xid >= last)).toBe(true);
    await session.runner.catchUp();
    // The in-memory projection starts from zero at every boot; the durable one from its checkpoint.
    expect(session.memory.eventIds).toEqual(markers(log));
    expect(await LoggingProjection.eventIds(session.fixture.database, 'durable-markers')).toEqual(markers(log));
  }, 90_000);

  test('a rebuild from position zero reproduces the durable projection row for row', async () => {
    const before = await LoggingProjection.eventIds(session.fixture.database, 'durable-markers');
    await session.runner.rebuild('durable-markers');
    expect(await LoggingProjection.eventIds(session.fixture.database, 'durable-markers')).toEqual(before);
    expect(before).toEqual(markers(log));
  }, 60_000);
});

/**
 * initdb itself uses ~750 transaction ids, so no real transaction ever has id 9 or 99. Rows that carry
 * such ids (as a log restored with its original ids would) still check the statements at 9→10 and
 * 99→100; their global positions run against the id order, so only an xid8 ordering passes.
 */
describe.each(storeTargets().map((t) => [t.name, t] as const))('reading order at 9→10 and 99→100 on %s', (_name, target) => {
  let fixture: StoreFixture;
  beforeAll(async () => {
    fixture = await target.open();
  });
  afterAll(async () => {
    await fixture.close();
  });

  test('readAll, the runner and a rebuild order ids 9, 10, 99, 100 numerically at every page size', async () => {
    const ids = [100, 99, 10, 9]; // inserted in this order: the highest id gets the lowest global position
    const eventIds = new Map<number, string>();
    for (const xid of ids) {
      const eventId = uuidv7();
      eventIds.set(xid, eventId);
      await fixture.database.query(
        `INSERT INTO events (transaction_id, stream_id, stream_version, event_id, event_type, schema_version, data, metadata)
         VALUES ($1::xid8, $2, 1, $3, 'Restored', 1, '{}', '{}')`,
        [String(xid), `restored-${xid}-${eventId}`, eventId],
      );
    }
    const expected = [9, 10, 99, 100].map((xid) => eventIds.get(xid));
    for (const limit of [1, 2, 3, 1000]) {
      expect((await readWhole(fixture, limit, ['Restored'])).map((event) => event.eventId)).toEqual(expected);
    }
    await LoggingProjection.createTable(fixture.database);
    const runner = new ProjectionRunner(fixture.store, fixture.database, {
      pollIntervalMs: 3_600_000, listen: false, batchSize: 1, runDurable: true,
    });
    const memory = new RecordingProjection('memory-restored', ['Restored']);
    runner.addInMemory(memory);
    runner.addDurable(new LoggingProjection('durable-restored', ['Restored']));
    await runner.start();
    try {
      await runner.catchUp();
      expect(memory.eventIds).toEqual(expected);
      expect(await LoggingProjection.eventIds(fixture.database, 'durable-restored')).toEqual(expected);
      await runner.rebuild('durable-restored');
      expect(await LoggingProjection.eventIds(fixture.database, 'durable-restored')).toEqual(expected);
    } finally {
      await runner.stop();
    }
  });
});

/**
 * A transaction open anywhere on the server holds the read horizon back (DESIGN §4: readers stop below
 * the snapshot's xmin). catchUp must not report "caught up" meanwhile: it waits for the horizon to pass
 * the last event visible at the call, and says why when it gives up.
 */
describeOnPostgres('catchUp under a held-back read horizon on %s', (target) => {
  test('waits for the open transaction, then has read everything committed before the call', async () => {
    const fixture = await target.open();
    const blocker = new pg.Client({ connectionString: fixture.url! });
    await blocker.connect();
    const runner = new ProjectionRunner(fixture.store, fixture.database, {
      pollIntervalMs: 3_600_000, listen: false, batchSize: 10, runDurable: true,
    });
    const memory = new RecordingProjection('memory-held', ['Held']);
    runner.addInMemory(memory);
    await runner.start();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT pg_current_xact_id()'); // an id below every event appended from now on
      const eventId = uuidv7();
      await fixture.store.append({ streamId: `held-${eventId}`, events: [{ eventId, type: 'Held', data: {} }], expectedVersion: 'no-stream' });
      await expect(runner.catchUp(undefined, 300)).rejects.toThrow(/read horizon/);
      expect(memory.eventIds).toEqual([]); // committed, but not readable yet: an earlier transaction may still append
      const waiting = runner.catchUp();
      setTimeout(() => void blocker.query('COMMIT'), 200);
      await waiting;
      expect(memory.eventIds).toEqual([eventId]);
    } finally {
      await runner.stop();
      await blocker.end();
      await fixture.close();
    }
  });
});

/**
 * Transactions of other databases on the same server cannot write to this log, so they must not hold
 * its readers back: a long batch job in a neighbouring database would otherwise stall revocations and
 * routing changes on every gateway node. One in this database still does (it may append).
 */
describeOnPostgres('the read horizon and other databases on %s', (target) => {
  test('a writing transaction open in another database does not hold the log back; one in this database does', async () => {
    const fixture = await target.open();
    const neighbour = await createScratchDatabase(requireService('DATABASE_URL')!);
    const foreign = new pg.Client({ connectionString: neighbour.url });
    const local = new pg.Client({ connectionString: fixture.url! });
    await foreign.connect();
    await local.connect();
    try {
      await foreign.query('BEGIN');
      await foreign.query('SELECT pg_current_xact_id()'); // an xid older than everything appended below
      const first = uuidv7();
      await fixture.store.append({ streamId: `neighbour-${first}`, events: [{ eventId: first, type: 'Neighbour', data: {} }], expectedVersion: 'no-stream' });
      const read = await fixture.store.readAll(START, { limit: 100, types: ['Neighbour'] });
      expect(read.events.map((e) => e.eventId)).toEqual([first]);

      await local.query('BEGIN');
      await local.query('SELECT pg_current_xact_id()');
      const second = uuidv7();
      await fixture.store.append({ streamId: `neighbour-${second}`, events: [{ eventId: second, type: 'Neighbour', data: {} }], expectedVersion: 'no-stream' });
      const held = await fixture.store.readAll(read.next, { limit: 100, types: ['Neighbour'] });
      expect(held.events).toEqual([]); // committed, but a transaction of this database began before it and may still append
      await local.query('COMMIT');
      const released = await fixture.store.readAll(read.next, { limit: 100, types: ['Neighbour'] });
      expect(released.events.map((e) => e.eventId)).toEqual([second]);
    } finally {
      await foreign.query('ROLLBACK').catch(() => undefined);
      await local.query('ROLLBACK').catch(() => undefined);
      await foreign.end();
      await local.end();
      await neighbour.drop();
      await fixture.close();
    }
  });
});
