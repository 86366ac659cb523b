import { Logger } from '@nestjs/common';
import type { RecordedEvent, SqlExecutor } from '../../src/kernel/index.js';
import { uuidv7 } from '../../src/kernel/ids.js';
import { ProjectionRunner } from '../../src/kernel/projections/projection-runner.js';
import { storeTargets } from '../support/event-store-targets.js';
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
