import pg from 'pg';
import type { Database } from '../../src/kernel/database/database.js';
import { type LogPosition, START } from '../../src/kernel/event-store/event-store.js';
import { SqlEventStore } from '../../src/kernel/event-store/sql-event-store.js';
import { uuidv7 } from '../../src/kernel/ids.js';
import { ProjectionRunner } from '../../src/kernel/projections/projection-runner.js';
import { type StoreFixture, openStore } from '../support/event-store-targets.js';
import { OwnPostgres, ownPostgresAvailable } from '../support/own-postgres.js';
import { LoggingProjection } from '../support/recording-projections.js';
import { seededRandom } from '../support/seeded-random.js';

/**
 * A property of the global order (DESIGN §4): for any interleaving of concurrent writers — transactions
 * overlapping, committing out of identity order, some held open across many steps, some rolled back —
 * every reader sees every committed event exactly once, never an uncommitted one, in one order that is
 * the same for every reader, for a fresh read and for a durable projection before and after a rebuild.
 * Each seed is one random interleaving; the server starts just below transaction id 100,000 so that the
 * interleavings also cross that boundary.
 */

const SEEDS = 16;
const WRITERS = 4;
const TRANSACTIONS_PER_WRITER = 3;
const READERS = 3;
const BOUNDARY = 100_000;


type Step =
  | { kind: 'begin'; writer: number; takeIdNow: boolean }
  | { kind: 'append'; writer: number; events: number }
  | { kind: 'end'; writer: number; commit: boolean }
  | { kind: 'read'; reader: number };

/**
 * Each writer's steps stay in its own order; writers and readers interleave at random. One more writer
 * (the last) opens a transaction first, appends, and commits only after everyone else: its events have
 * the lowest transaction id and global positions, and commit last.
 */
function schedule(next: () => number): Step[] {
  const queues: Step[][] = Array.from({ length: WRITERS }, (_, writer) => {
    const steps: Step[] = [];
    for (let t = 0; t < TRANSACTIONS_PER_WRITER; t++) {
      steps.push({ kind: 'begin', writer, takeIdNow: next() < 0.5 });
      const appends = 1 + Math.floor(next() * 3);
      for (let a = 0; a < appends; a++) steps.push({ kind: 'append', writer, events: 1 + Math.floor(next() * 2) });
      steps.push({ kind: 'end', writer, commit: next() < 0.8 });
    }
    return steps;
  });
  const holder = WRITERS;
  const out: Step[] = [{ kind: 'begin', writer: holder, takeIdNow: true }, { kind: 'append', writer: holder, events: 2 }];
  for (;;) {
    const live = queues.filter((queue) => queue.length > 0);
    if (live.length === 0) break;
    if (next() < 0.35) out.push({ kind: 'read', reader: Math.floor(next() * READERS) });
    else out.push(live[Math.floor(next() * live.length)].shift()!);
  }
  out.push({ kind: 'read', reader: 0 }, { kind: 'end', writer: holder, commit: true });
  return out;
}

/** One writer: its own session, running the store's real append statement inside transactions it controls. */
class Writer {
  private readonly client: pg.Client;
  private readonly store: SqlEventStore;
  private open: string[] | null = null;

  constructor(url: string) {
    this.client = new pg.Client({ connectionString: url });
    this.client.on('error', () => undefined);
    const session = {
      kind: 'postgres',
      query: async (sql: string, params?: unknown[], name?: string) =>
        (await this.client.query(name ? { name, text: sql, values: params } : { text: sql, values: params })).rows,
    };
    this.store = new SqlEventStore(session as unknown as Database);
  }

  async connect(): Promise<void> {
    await this.client.connect();
  }

  async begin(takeIdNow: boolean): Promise<void> {
    await this.client.query('BEGIN');
    if (takeIdNow) await this.client.query('SELECT pg_current_xact_id()');
    this.open = [];
  }

  async append(events: number): Promise<void> {
    const batch = Array.from({ length: events }, () => ({ eventId: uuidv7(), type: 'Raced', data: {} }));
    await this.store.append({ streamId: `raced-${uuidv7()}`, events: batch, expectedVersion: 'no-stream' });
    this.open!.push(...batch.map((event) => event.eventId));
  }

  /** Returns the ids that became visible (none on rollback). */
  async end(commit: boolean): Promise<string[]> {
    await this.client.query(commit ? 'COMMIT' : 'ROLLBACK');
    const ids = this.open!;
    this.open = null;
    return commit ? ids : [];
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

class Reader {
  readonly seen: string[] = [];
  private position: LogPosition;

  constructor(
    private readonly fixture: StoreFixture,
    from: LogPosition,
    private readonly limit: number,
  ) {
    this.position = from;
  }

  /** One page; true when it reached the end of what is readable now. */
  async page(): Promise<boolean> {
    const page = await this.fixture.store.readAll(this.position, { limit: this.limit, types: ['Raced'] });
    this.seen.push(...page.events.map((event) => event.eventId));
    this.position = page.next;
    return page.caughtUp;
  }

  async toEnd(): Promise<void> {
    while (!(await this.page()));
  }
}

const describeOwn = ownPostgresAvailable() ? describe : describe.skip;

describeOwn('concurrent writers, many readers: one order, every committed event once (PostgreSQL)', () => {
  let server: OwnPostgres;
  let fixture: StoreFixture;
  beforeAll(async () => {
    server = await OwnPostgres.create({ nextTransactionId: BOUNDARY - 60 });
    fixture = await openStore(server.url());
  }, 60_000);
  afterAll(async () => {
    await fixture?.close();
    await server?.remove();
  }, 60_000);

  test(`${SEEDS} random interleavings crossing transaction id ${BOUNDARY}`, async () => {
    const committed: string[] = [];
    const perSeed: string[][] = [];
    for (let seed = 1; seed <= SEEDS; seed++) {
      const next = seededRandom(seed);
      const start = await endOfLog(fixture);
      const writers = Array.from({ length: WRITERS + 1 }, () => new Writer(server.url()));
      await Promise.all(writers.map((writer) => writer.connect()));
      const readers = Array.from({ length: READERS }, () => new Reader(fixture, start, 1 + Math.floor(next() * 5)));
      const visible = new Set<string>();
      try {
        for (const step of schedule(next)) {
          if (step.kind === 'begin') await writers[step.writer].begin(step.takeIdNow);
          else if (step.kind === 'append') await writers[step.writer].append(step.events);
          else if (step.kind === 'end') for (const id of await writers[step.writer].end(step.commit)) visible.add(id);
          else await readers[step.reader].page();
          // No reader ever holds an event that is not committed.
          for (const reader of readers) expect(reader.seen.every((id) => visible.has(id))).toBe(true);
        }
      } finally {
        await Promise.all(writers.map((writer) => writer.close()));
      }
      for (const reader of readers) await reader.toEnd();
      const [first, ...others] = readers.map((reader) => reader.seen);
      expect({ seed, duplicates: first.length - new Set(first).size }).toEqual({ seed, duplicates: 0 });
      expect({ seed, missing: [...visible].filter((id) => !first.includes(id)) }).toEqual({ seed, missing: [] });
      expect(first).toHaveLength(visible.size);
      for (const other of others) expect({ seed, order: other }).toEqual({ seed, order: first });
      perSeed.push(first);
      committed.push(...first);
    }

    // The one order is the (transaction id, global position) order, numerically, and the seeds did cross the boundary.
    const rows = await fixture.database.query<{ event_id: string; xid: string }>(
      `SELECT event_id::text AS event_id, transaction_id::text AS xid FROM events WHERE event_type = 'Raced'
       ORDER BY transaction_id, global_position`,
    );
    expect(rows.map((row) => row.event_id)).toEqual(committed);
    expect(Number(rows[0].xid)).toBeLessThan(BOUNDARY);
    expect(Number(rows[rows.length - 1].xid)).toBeGreaterThanOrEqual(BOUNDARY);

    // A fresh reader from zero, and a durable projection before and after its rebuild, agree.
    const fresh = new Reader(fixture, START, 1000);
    await fresh.toEnd();
    expect(fresh.seen).toEqual(committed);
    await LoggingProjection.createTable(fixture.database);
    const runner = new ProjectionRunner(fixture.store, fixture.database, {
      pollIntervalMs: 3_600_000, listen: false, batchSize: 7, runDurable: true,
    });
    runner.addDurable(new LoggingProjection('raced', ['Raced']));
    await runner.start();
    try {
      await runner.catchUp();
      expect(await LoggingProjection.eventIds(fixture.database, 'raced')).toEqual(committed);
      await runner.rebuild('raced');
      expect(await LoggingProjection.eventIds(fixture.database, 'raced')).toEqual(committed);
    } finally {
      await runner.stop();
    }
  }, 120_000);
});

async function endOfLog(fixture: StoreFixture): Promise<LogPosition> {
  let position = START;
  for (;;) {
    const page = await fixture.store.readAll(position, { limit: 1000 });
    position = page.next;
    if (page.caughtUp) return position;
  }
}
