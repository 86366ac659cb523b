import { Logger } from '@nestjs/common';
import { CostLedgerProjection } from '../../projections/cost-ledger/cost-ledger.projection.js';
import { SqlEventStore } from '../../src/kernel/event-store/sql-event-store.js';
import { ProjectionRunner, RebuildFailedError } from '../../src/kernel/projections/projection-runner.js';
import { storeTargets } from '../support/event-store-targets.js';
import { type AttemptData, POISONED_USAGE, appendAll, attemptFinished } from '../support/ledger-events.js';

Logger.overrideLogger(['error']);

/**
 * Issue 32's rebuild aside, on both adapters (the embedded engine runs it in the serving process): the
 * projection's SQL runs unchanged against the rebuild's copies because its transactions put the rebuild's
 * schema first on the search path — which holds for named statements too, prepared before under the
 * ordinary path (PostgreSQL parses them again when the path changes; PGlite runs them as PREPARE/EXECUTE).
 */
describe.each(storeTargets())('rebuilding aside ($name)', ({ open }) => {
  test('a named statement prepared under one search path reads the tables of the path in force at each use', async () => {
    const fixture = await open();
    const db = fixture.database;
    try {
      await db.query(`CREATE TABLE aside_probe (v text)`);
      await db.query(`INSERT INTO aside_probe VALUES ('live')`);
      await db.query(`CREATE SCHEMA aside_probe_copy`);
      await db.query(`CREATE TABLE aside_probe_copy.aside_probe (LIKE aside_probe INCLUDING ALL)`);
      await db.query(`INSERT INTO aside_probe_copy.aside_probe VALUES ('copy')`);
      const read = async (executor: { query: typeof db.query }) =>
        (await executor.query<{ v: string }>(`SELECT v FROM aside_probe WHERE v <> $1`, ['-'], 'aside_probe_read_v1'))[0].v;
      const seen: string[] = [await read(db)];
      for (let round = 0; round < 3; round++) {
        seen.push(await db.transaction((tx) => read(tx), { searchPath: 'aside_probe_copy' }));
        seen.push(await db.transaction((tx) => read(tx)));
        seen.push(await read(db));
      }
      expect(seen).toEqual(['live', 'copy', 'live', 'live', 'copy', 'live', 'live', 'copy', 'live', 'live']);
    } finally {
      await fixture.close();
    }
  }, 60_000);

  test('while the live ledger keeps moving, a replay that meets a bad event changes nothing; repaired, the rebuild swaps in the same rows', async () => {
    const fixture = await open();
    let repairing = false;
    const store = new SqlEventStore(fixture.database, (type, schemaVersion, data) => {
      const attempt = data as AttemptData;
      if (!repairing || type !== 'AttemptFinished' || attempt.usage.input < POISONED_USAGE) return { schemaVersion, data };
      return { schemaVersion, data: { ...attempt, usage: { ...attempt.usage, input: 7 } } };
    });
    const runner = new ProjectionRunner(store, fixture.database, { pollIntervalMs: 100, listen: true, batchSize: 100, runDurable: true });
    runner.addDurable(new CostLedgerProjection());
    const snapshot = () => fixture.database.query(`SELECT *, cost_usd::text AS cost_usd FROM cost_ledger ORDER BY request_id, attempt`);
    try {
      await appendAll(store, Array.from({ length: 250 }, (_, i) => attemptFinished(i + 1)));
      await runner.start();
      await runner.catchUp(['cost-ledger']);
      expect(await snapshot()).toHaveLength(250);

      // A poisoned attempt arrives: the live ledger halts at it, a rebuild meets it too and gives up, and the
      // ledger is as it was.
      await appendAll(store, [attemptFinished(251, (data) => (data.usage.input = POISONED_USAGE))]);
      for (const begun = Date.now(); !runner.status()[0].halted; await new Promise((resolve) => setTimeout(resolve, 50))) {
        if (Date.now() - begun > 20_000) throw new Error('the ledger did not halt');
      }
      const before = await snapshot();
      await expect(runner.rebuild('cost-ledger')).rejects.toThrow(RebuildFailedError);
      expect(await snapshot()).toEqual(before);
      const [schemas] = await fixture.database.query<{ n: string }>(`SELECT count(*)::text AS n FROM pg_namespace WHERE nspname LIKE 'switchyard_rebuild%'`);
      expect(schemas.n).toBe('0');

      // Repaired: the rebuild swaps in every row (the halted one's included) and the live ledger goes on from there.
      repairing = true;
      await runner.rebuild('cost-ledger');
      expect(runner.status()[0].halted).toBeNull();
      await appendAll(store, Array.from({ length: 20 }, (_, i) => attemptFinished(300 + i)));
      await runner.catchUp(['cost-ledger']);
      const after = await snapshot();
      expect(after).toHaveLength(271);
      expect(after.slice(0, 250)).toEqual(before);
      const quiet = await runner.rebuild('cost-ledger');
      expect(quiet.replaced?.every((table) => table.removed === 0 && table.added === 0)).toBe(true);
      expect(await snapshot()).toEqual(after);
    } finally {
      await runner.stop();
      await fixture.close();
    }
  }, 120_000);
});
