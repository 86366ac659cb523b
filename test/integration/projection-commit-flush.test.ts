import { Logger } from '@nestjs/common';
import type { RecordedEvent, SqlExecutor } from '../../src/kernel/index.js';
import { uuidv7 } from '../../src/kernel/ids.js';
import { ProjectionRunner } from '../../src/kernel/projections/projection-runner.js';
import { openStore, storeTargets } from '../support/event-store-targets.js';
import { OwnPostgres, ownPostgresAvailable } from '../support/own-postgres.js';
import { LoggingProjection } from '../support/recording-projections.js';

Logger.overrideLogger(['error']);

async function synchronousCommit(executor: SqlExecutor): Promise<string> {
  const rows = await executor.query<{ setting: string }>(`SELECT current_setting('synchronous_commit') AS setting`);
  return rows[0].setting;
}

/**
 * A durable projection's page commits with its checkpoint and is rebuilt from the log, so on PostgreSQL its
 * commit does not wait for the WAL flush (the appends the requests wait for do). The setting is the
 * transaction's alone: nothing else on the pooled connection inherits it.
 */
describe.each(storeTargets())('projection commits and the WAL flush ($name)', ({ name, open }) => {
  test('a background-flush transaction alone runs with synchronous_commit off, committed or rolled back', async () => {
    const fixture = await open();
    try {
      const db = fixture.database;
      if (name === 'postgres') {
        expect(await db.transaction((tx) => synchronousCommit(tx), { flush: 'background' })).toBe('off');
        expect(await db.transaction((tx) => synchronousCommit(tx))).toBe('on');
        await expect(db.transaction(async (tx) => {
          await tx.query(`CREATE TABLE flush_probe (n int)`);
          throw new Error('rolled back');
        }, { flush: 'background' })).rejects.toThrow('rolled back');
        // The pool is small: these queries reuse the connections the transactions above ran on.
        for (let i = 0; i < 12; i++) expect(await synchronousCommit(db)).toBe('on');
        expect(await db.query(`SELECT to_regclass('flush_probe') AS t`)).toEqual([{ t: null }]);
      } else {
        // The embedded engine accepts the option and commits as ever.
        await db.transaction((tx) => tx.query(`CREATE TABLE flush_probe (n int)`), { flush: 'background' });
        expect(await db.query(`SELECT to_regclass('flush_probe')::text AS t`)).toEqual([{ t: 'flush_probe' }]);
      }
    } finally {
      await fixture.close();
    }
  }, 30_000);

  test("a durable projection's page is applied with the checkpoint under a background flush, every event once", async () => {
    const fixture = await open();
    const runner = new ProjectionRunner(fixture.store, fixture.database, { pollIntervalMs: 60_000, listen: false, batchSize: 3, runDurable: true });
    const seen: string[] = [];
    class Probing extends LoggingProjection {
      override async handle(manager: SqlExecutor, events: readonly RecordedEvent[]): Promise<void> {
        seen.push(await synchronousCommit(manager));
        await super.handle(manager, events);
      }
    }
    try {
      await LoggingProjection.createTable(fixture.database);
      runner.addDurable(new Probing('probing', ['Probed']));
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        const eventId = uuidv7();
        ids.push(eventId);
        await fixture.store.append({ streamId: `probe-${eventId}`, events: [{ eventId, type: 'Probed', data: { i } }], expectedVersion: 'no-stream' });
      }
      await runner.start();
      await runner.catchUp();
      expect(await LoggingProjection.eventIds(fixture.database, 'probing')).toEqual(ids);
      expect(seen.length).toBe(3); // pages of 3, 3 and 1
      if (name === 'postgres') expect(new Set(seen)).toEqual(new Set(['off']));
      // The appends themselves still wait for the flush.
      expect(await synchronousCommit(fixture.database)).toBe('on');
    } finally {
      await runner.stop();
      await fixture.close();
    }
  }, 30_000);
});

const describeOwn = ownPostgresAvailable() ? describe : describe.skip;

/**
 * What the background flush may cost: a server that dies (kill -9 of the postmaster, so the WAL buffers
 * in its shared memory die with it) after the projection's last commits. Whatever of them was lost is
 * lost with its checkpoint, and the runner applies it again: every event once, none missing, in order.
 */
describeOwn('a projection whose server is killed right after its background commits (a server of its own)', () => {
  test('pages lost with the server are applied again from the log; nothing twice, nothing missing', async () => {
    // The WAL writer's longest sleep: what the projection committed last is still in the WAL buffers.
    const server = await OwnPostgres.create({ settings: { wal_writer_delay: '10000ms', wal_writer_flush_after: '0' } });
    const appended: string[] = [];
    let lostPages = 0;
    try {
      // Three kills; each next round first looks at what survived, then lets the runner apply the rest again.
      for (let round = 0; round <= 3; round++) {
        const fixture = await openStore(server.url());
        const runner = new ProjectionRunner(fixture.store, fixture.database, { pollIntervalMs: 60_000, listen: false, batchSize: 5, runDurable: true });
        try {
          await LoggingProjection.createTable(fixture.database);
          // Every committed append survived; the projection kept a prefix of them (its lost pages with their checkpoint).
          const survived = await LoggingProjection.eventIds(fixture.database, 'crashing');
          const events = await fixture.database.query<{ n: string }>(`SELECT count(*)::text AS n FROM events WHERE event_type = 'Crashed'`);
          expect(Number(events[0].n)).toBe(appended.length);
          expect(appended.slice(0, survived.length)).toEqual(survived);
          if (survived.length < appended.length) lostPages++;
          runner.addDurable(new LoggingProjection('crashing', ['Crashed']));
          await runner.start();
          await runner.catchUp();
          expect(await LoggingProjection.eventIds(fixture.database, 'crashing')).toEqual(appended);
          if (round === 3) break;
          for (let i = 0; i < 12; i++) {
            const eventId = uuidv7();
            await fixture.store.append({ streamId: `crash-${eventId}`, events: [{ eventId, type: 'Crashed', data: { round, i } }], expectedVersion: 'no-stream' });
            appended.push(eventId); // committed: the append waited for the flush
          }
          await runner.catchUp();
          expect(await LoggingProjection.eventIds(fixture.database, 'crashing')).toEqual(appended);
          await server.kill();
        } finally {
          await runner.stop().catch(() => undefined);
          await fixture.close().catch(() => undefined);
        }
        await server.start();
      }
      // Whether a kill caught commits in the WAL buffers depends on timing; say how often it did.
      process.stderr.write(`[info] background-flush crash test: ${lostPages} of 3 kills lost projection pages that were applied again\n`);
    } finally {
      await server.remove();
    }
  }, 120_000);
});
