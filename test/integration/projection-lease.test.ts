import { Logger } from '@nestjs/common';
import pg from 'pg';
import { uuidv7 } from '../../src/kernel/ids.js';
import { ProjectionRunner } from '../../src/kernel/projections/projection-runner.js';
import { type StoreFixture, openStore } from '../support/event-store-targets.js';
import { LoggingProjection } from '../support/recording-projections.js';
import { createScratchDatabase, requireService } from '../support/services.js';

Logger.overrideLogger(['error']);

const baseUrl = requireService('DATABASE_URL');
const describeWithPostgres = baseUrl ? describe : describe.skip;

/**
 * Singleton projections hold an advisory-lock lease on a session of their own (DESIGN §5). When the
 * server drops that session, the lock is gone and another node may take it: the projection must stop
 * at once and continue only after it holds the lease again — and every event is still applied once.
 */
describeWithPostgres('a durable projection whose lease session is terminated', () => {
  test('stops, another node takes over, every event is applied exactly once and in order', async () => {
    const scratch = await createScratchDatabase(baseUrl!);
    const nodes: Array<{ fixture: StoreFixture; runner: ProjectionRunner }> = [];
    const admin = new pg.Client({ connectionString: scratch.url });
    await admin.connect();
    try {
      for (let n = 0; n < 2; n++) {
        const fixture = await openStore(scratch.url);
        if (n === 0) await LoggingProjection.createTable(fixture.database);
        const runner = new ProjectionRunner(fixture.store, fixture.database, {
          pollIntervalMs: 100, listen: true, batchSize: 3, runDurable: true,
        });
        runner.addDurable(new LoggingProjection('shared', ['Leased']));
        nodes.push({ fixture, runner });
      }
      await nodes[0].runner.start();
      await nodes[0].runner.catchUp();
      await nodes[1].runner.start();
      const held = () => nodes.map((node) => node.runner.status()[0].leaseHeld);
      expect(held()).toEqual([true, false]);

      const appended: string[] = [];
      const append = async (count: number) => {
        for (let i = 0; i < count; i++) {
          const eventId = uuidv7();
          await nodes[0].fixture.store.append({ streamId: `leased-${eventId}`, events: [{ eventId, type: 'Leased', data: {} }], expectedVersion: 'no-stream' });
          appended.push(eventId);
        }
      };
      const applied = () => LoggingProjection.eventIds(nodes[0].fixture.database, 'shared');
      const until = async (probe: () => Promise<boolean> | boolean, what: string) => {
        for (const started = Date.now(); !(await probe()); ) {
          if (Date.now() - started > 15_000) throw new Error(`${what} did not happen within 15 s`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };

      await append(10);
      await until(async () => (await applied()).length === 10, 'node 0 applying the first events');

      const leaseSessions = async () =>
        (await admin.query(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'switchyard-lease'`,
        )).rows.map((row) => row.pid as number);
      const [lost] = await leaseSessions();
      expect(await leaseSessions()).toEqual([lost]); // node 0's; node 1 holds none
      const leaseOf0 = (nodes[0].runner as unknown as { workers: Map<string, { lease: { held: boolean } | null }> }).workers.get('shared')!.lease!;
      await admin.query(`SELECT pg_terminate_backend($1)`, [lost]);
      // The lease object node 0 held says so at once (it may take a new one soon after).
      await until(() => !leaseOf0.held, 'node 0 noticing its lease is gone');

      // Either node may take the lease next; exactly one does, and the projection continues from the checkpoint.
      await append(10);
      await until(async () => (await applied()).length === 20, 'the lease holder applying the rest');
      await until(() => held().filter(Boolean).length === 1, 'one node holding the lease');
      // The sessions holding an advisory lock: exactly one, not the one terminated.
      const holders = async () =>
        (await admin.query(
          `SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database()`,
        )).rows.map((row) => row.pid as number);
      const [taken] = await holders();
      expect(taken).not.toBe(lost);
      expect(await holders()).toEqual([taken]);
      // The other node keeps trying for the lease, each time on a session it ends when the lock is
      // refused: such a session can be seen for a moment, but none stays open beside the holder's.
      await until(async () => (await leaseSessions()).join() === String(taken), "only the holder's lease session left open");
      expect(await applied()).toEqual(appended);
    } finally {
      for (const node of nodes) {
        await node.runner.stop();
        await node.fixture.close();
      }
      await admin.end();
      await scratch.drop();
    }
  }, 60_000);
});
