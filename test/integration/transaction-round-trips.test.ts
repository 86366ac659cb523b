import { Logger } from '@nestjs/common';
import pg from 'pg';
import { uuidv7 } from '../../src/kernel/ids.js';
import { ProjectionRunner } from '../../src/kernel/projections/projection-runner.js';
import { type StoreFixture, storeTargets } from '../support/event-store-targets.js';
import { LoggingProjection } from '../support/recording-projections.js';

Logger.overrideLogger(['error']);

/**
 * A transaction's `opening` statement travels with its BEGIN and its `closing` statement with its COMMIT.
 * The durable projections use them for the checkpoint's lock and save, so a page is three round trips on
 * PostgreSQL; on both stores the statements keep the meaning they had as statements of their own.
 */
describe.each(storeTargets())('statements that open and close a transaction ($name)', ({ name, open }) => {
  test("the opening's rows reach the work, the closing commits with it, and either failing changes nothing", async () => {
    const fixture = await open();
    const db = fixture.database;
    try {
      await db.query(`CREATE TABLE round_trip_probe (n int PRIMARY KEY)`);
      await db.query(`INSERT INTO round_trip_probe VALUES (1)`);
      const opened = await db.transaction(async (tx, rows) => {
        await tx.query(`INSERT INTO round_trip_probe VALUES (2)`);
        return rows;
      }, { opening: `SELECT n FROM round_trip_probe ORDER BY n FOR UPDATE`, closing: `INSERT INTO round_trip_probe VALUES (3)` });
      expect(opened).toEqual([{ n: 1 }]);
      expect(await probe(db)).toEqual([1, 2, 3]);

      // The work fails: the closing never runs, and the work's own statement is rolled back.
      await expect(db.transaction(async (tx) => {
        await tx.query(`INSERT INTO round_trip_probe VALUES (4)`);
        throw new Error('work failed');
      }, { closing: `INSERT INTO round_trip_probe VALUES (5)` })).rejects.toThrow('work failed');
      // The closing fails (a duplicate key): the work's statement goes with it, and its COMMIT never runs.
      await expect(db.transaction((tx) => tx.query(`INSERT INTO round_trip_probe VALUES (6)`), { closing: `INSERT INTO round_trip_probe VALUES (1)` }))
        .rejects.toThrow(/duplicate key/);
      // The opening fails: nothing of the work runs.
      let ran = false;
      await expect(db.transaction(async () => (ran = true), { opening: `SELECT 1 / 0` })).rejects.toThrow(/division by zero/);
      expect(ran).toBe(false);
      expect(await probe(db)).toEqual([1, 2, 3]);
      // Whichever connection each ran on is usable again, outside any transaction.
      for (let i = 0; i < 12; i++) expect(await db.query(`SELECT count(*)::int AS n FROM round_trip_probe`)).toEqual([{ n: 3 }]);
      // A transaction with only a closing statement still runs it in a transaction of its own.
      await db.transaction(async () => undefined, { closing: `INSERT INTO round_trip_probe VALUES (7)` });
      expect(await probe(db)).toEqual([1, 2, 3, 7]);
    } finally {
      await fixture.close();
    }
  }, 30_000);

  test('a durable projection applies each page in three round trips, its checkpoint locked and saved as before', async () => {
    const fixture = await open();
    const runner = new ProjectionRunner(fixture.store, fixture.database, { pollIntervalMs: 60_000, listen: false, batchSize: 4, runDurable: true });
    const sent: string[] = [];
    const query = pg.Client.prototype.query;
    try {
      await LoggingProjection.createTable(fixture.database);
      runner.addDurable(new LoggingProjection('round-trips', ['Counted']));
      const ids = await appendEvents(fixture.store, 'Counted', 10);
      // Every statement any pg client sends from here on (the runner's reads and pages).
      recordStatements(sent);
      await runner.start();
      await runner.catchUp();
      pg.Client.prototype.query = query;
      expect(await LoggingProjection.eventIds(fixture.database, 'round-trips')).toEqual(ids);
      // The checkpoint is at or past the last event (a page that reached the read horizon ends at the
      // horizon's transaction), as the parameterized save left it.
      expect(await checkpointPastLastEvent(fixture.database, 'round-trips')).toBe(true);
      // Started again, the runner finds nothing to apply again.
      await runner.stop();
      const again = new ProjectionRunner(fixture.store, fixture.database, { pollIntervalMs: 60_000, listen: false, batchSize: 4, runDurable: true });
      again.addDurable(new LoggingProjection('round-trips', ['Counted']));
      await again.start();
      await again.catchUp();
      await again.stop();
      expect(await LoggingProjection.eventIds(fixture.database, 'round-trips')).toEqual(ids);
      if (name === 'postgres') {
        // Pages of 4, 4 and 2, each BEGIN + lock, the projection's insert, save + COMMIT; the very first
        // page also creates the missing checkpoint row (an insert and a lock of their own).
        const begins = sent.filter((text) => text.startsWith('BEGIN'));
        expect(begins).toHaveLength(3);
        expect(begins.every((text) => /FOR UPDATE$/.test(text))).toBe(true);
        expect(sent.filter((text) => /; COMMIT$/.test(text))).toHaveLength(3);
        expect(sent.filter((text) => text === 'COMMIT')).toHaveLength(0);
        // The second page, from its BEGIN to its COMMIT: three statements.
        const second = sent.findIndex((text, i) => text.startsWith('BEGIN') && sent.slice(0, i).some((t) => t.startsWith('BEGIN')));
        const committed = sent.findIndex((text, i) => i > second && /; COMMIT$/.test(text));
        expect(committed - second + 1).toBe(3);
      }
    } finally {
      pg.Client.prototype.query = query;
      await runner.stop();
      await fixture.close();
    }
  }, 30_000);

  test('a projection whose name is no plain literal keeps the parameterized lock and save', async () => {
    const fixture = await open();
    const runner = new ProjectionRunner(fixture.store, fixture.database, { pollIntervalMs: 60_000, listen: false, batchSize: 2, runDurable: true });
    const sent: string[] = [];
    const query = pg.Client.prototype.query;
    const quoted = "o'brien\\ledger";
    try {
      await LoggingProjection.createTable(fixture.database);
      runner.addDurable(new LoggingProjection(quoted, ['Quoted']));
      const ids = await appendEvents(fixture.store, 'Quoted', 5);
      recordStatements(sent);
      await runner.start();
      await runner.catchUp();
      pg.Client.prototype.query = query;
      expect(await LoggingProjection.eventIds(fixture.database, quoted)).toEqual(ids);
      expect(await checkpointPastLastEvent(fixture.database, quoted)).toBe(true);
      if (name === 'postgres') {
        expect(sent.some((text) => text.includes('brien'))).toBe(false); // never written into a statement
        expect(sent.filter((text) => text === 'COMMIT').length).toBeGreaterThanOrEqual(3);
      }
    } finally {
      pg.Client.prototype.query = query;
      await runner.stop();
      await fixture.close();
    }
  }, 30_000);
});

/** Appends `count` events of `type`, each on a stream of its own; their ids, in order. */
async function appendEvents(store: StoreFixture['store'], type: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const eventId = uuidv7();
    ids.push(eventId);
    await store.append({ streamId: `${type}-${eventId}`, events: [{ eventId, type, data: { i } }], expectedVersion: 'no-stream' });
  }
  return ids;
}

/** Whether the projection's checkpoint is at or past the log's last event (caught up, it may sit at the read horizon). */
async function checkpointPastLastEvent(db: StoreFixture['database'], projection: string): Promise<boolean> {
  const rows = await db.query<{ past: boolean }>(
    `SELECT c.transaction_id > e.transaction_id OR (c.transaction_id = e.transaction_id AND c.global_position >= e.global_position) AS past
     FROM projection_checkpoints c,
          (SELECT transaction_id, global_position FROM events ORDER BY transaction_id DESC, global_position DESC LIMIT 1) e
     WHERE c.name = $1`,
    [projection],
  );
  return rows[0]?.past === true;
}

/** Records the text of every statement any pg client sends, until `pg.Client.prototype.query` is put back. */
function recordStatements(sent: string[]): void {
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string; name?: string };
    sent.push(typeof config === 'string' ? config : config.text ?? config.name ?? '');
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
}

async function probe(db: { query<Row>(sql: string): Promise<Row[]> }): Promise<number[]> {
  return (await db.query<{ n: number }>(`SELECT n FROM round_trip_probe ORDER BY n`)).map((row) => row.n);
}
