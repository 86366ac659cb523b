import { Logger } from '@nestjs/common';
import type { ReadAllOptions } from '../../src/kernel/event-store/event-store.js';
import { uuidv7 } from '../../src/kernel/ids.js';
import { ProjectionRunner } from '../../src/kernel/projections/projection-runner.js';
import { ALL_EVENT_TYPES } from '../../src/kernel/projections/projection.js';
import { storeTargets } from '../support/event-store-targets.js';
import { LoggingProjection } from '../support/recording-projections.js';

Logger.overrideLogger(['error']);

/**
 * The durable projections that follow the head share one read of the log per page (the audit chain
 * follows every type, the ledger a few), each applying its own types under its own checkpoint; one of
 * them rebuilt reads alone and joins the others again afterwards. Every event is applied exactly once,
 * in the log's order, by every projection that follows its type.
 */
describe.each(storeTargets())('durable projections sharing reads ($name)', ({ open }) => {
  test('one read per page for all of them, and each still gets exactly its own events in order', async () => {
    const fixture = await open();
    const runner = new ProjectionRunner(fixture.store, fixture.database, { pollIntervalMs: 60_000, listen: false, batchSize: 4, runDurable: true });
    try {
      await LoggingProjection.createTable(fixture.database);
      const everything = new LoggingProjection('everything', ALL_EVENT_TYPES);
      const alphas = new LoggingProjection('alphas', ['Alpha']);
      const betas = new LoggingProjection('betas', ['Beta', 'Gamma']);
      for (const projection of [everything, alphas, betas]) runner.addDurable(projection);
      const appended: Array<{ id: string; type: string }> = [];
      const append = async (count: number) => {
        for (let i = 0; i < count; i++) {
          const eventId = uuidv7();
          const type = ['Alpha', 'Beta', 'Gamma', 'Delta'][appended.length % 4];
          await fixture.store.append({ streamId: `shared-${eventId}`, events: [{ eventId, type, data: { i } }], expectedVersion: 'no-stream' });
          appended.push({ id: eventId, type });
        }
      };
      const reads: Array<ReadAllOptions['types']> = [];
      const readAll = fixture.store.readAll.bind(fixture.store);
      fixture.store.readAll = (from, options) => {
        reads.push(options.types);
        return readAll(from, options);
      };
      const expectApplied = async () => {
        expect(await LoggingProjection.eventIds(fixture.database, 'everything')).toEqual(appended.map((e) => e.id));
        expect(await LoggingProjection.eventIds(fixture.database, 'alphas')).toEqual(appended.filter((e) => e.type === 'Alpha').map((e) => e.id));
        expect(await LoggingProjection.eventIds(fixture.database, 'betas')).toEqual(appended.filter((e) => e.type === 'Beta' || e.type === 'Gamma').map((e) => e.id));
      };

      await append(20);
      await runner.start();
      await runner.catchUp();
      await expectApplied();
      // Five full pages of four and the read that finds the end: shared by all three (every type, since
      // one of them follows every type), where reading alone would take 6 + 3 + 4 reads.
      expect(reads.length).toBeLessThanOrEqual(7);
      expect(reads.every((types) => types === undefined)).toBe(true);

      // A rebuild replays one projection alone, from position zero, with its own types only; the others
      // are not held back, and afterwards all three share reads again.
      await append(6);
      reads.length = 0;
      await runner.rebuild('alphas');
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.every((types) => types !== undefined && types.length === 1 && types[0] === 'Alpha')).toBe(true);
      await runner.catchUp();
      await expectApplied();

      await append(12);
      await runner.catchUp(); // the three may sit at slightly different positions after the rebuild
      await append(12);
      reads.length = 0;
      await runner.catchUp();
      await expectApplied();
      expect(reads.length).toBeLessThanOrEqual(4); // three full pages of four and the end, read once for all
    } finally {
      await runner.stop();
      await fixture.close();
    }
  }, 60_000);
});
