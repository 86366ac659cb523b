import { PgliteDatabase } from '../../src/kernel/database/pglite-database.js';
import { seededTemporaryDatabase } from '../support/pglite-template.js';

/**
 * The embedded store's session: named statements run as PREPARE/EXECUTE with their values written as
 * literals (the append is one, with its event ids as an array), under a generic plan scoped to the
 * statement; new WAL segments are not zero-filled.
 */
describe('PGlite session and named statements', () => {
  let database: PgliteDatabase;
  let seeded: Awaited<ReturnType<typeof seededTemporaryDatabase>>;
  beforeAll(async () => {
    seeded = await seededTemporaryDatabase();
    database = await PgliteDatabase.open(seeded.dir);
  });
  afterAll(async () => {
    await database.close();
    seeded.remove();
  });

  test('strings and arrays of strings arrive exactly, whatever characters they hold', async () => {
    const hostile = ['a"b', 'c\\d', "e'f", '{g,h}', '', 'NULL', ' spaced ', 'ü€😀'];
    for (let run = 0; run < 7; run++) {
      const rows = await database.query<{ list: string[]; single: string; n: number }>(
        `SELECT $1::text[] AS list, $2::text AS single, $3::int AS n`,
        [hostile, "x'y\\z", run],
        'prepared_probe',
      );
      expect(rows[0]).toEqual({ list: hostile, single: "x'y\\z", n: run });
    }
  });

  test('an array parameter takes the declared element type (uuid[]), and a bad element fails the statement alone', async () => {
    const ids = ['0190c8e2-6d6a-7cc0-9a4e-6f1f5b0e9a01', '0190c8e2-6d6a-7cc0-9a4e-6f1f5b0e9a02'];
    const rows = await database.query<{ n: number }>(`SELECT cardinality($1::uuid[])::int AS n`, [ids], 'uuid_probe');
    expect(rows[0].n).toBe(2);
    await expect(database.query(`SELECT cardinality($1::uuid[])::int AS n`, [['not-a-uuid']], 'uuid_probe')).rejects.toThrow(/uuid/);
  });

  test('the session does not zero-fill new WAL segments (each was a stall of the one session)', async () => {
    const rows = await database.query<{ wal_init_zero: string }>('SHOW wal_init_zero');
    expect(rows[0].wal_init_zero).toBe('off');
  });

  test('the generic plan does not outlive its statement, on success or failure, in or out of a transaction', async () => {
    const mode = async () => (await database.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode'))[0].plan_cache_mode;
    await database.query(`SELECT $1::text AS v`, ['ok'], 'mode_probe');
    expect(await mode()).toBe('auto');
    await expect(database.query(`SELECT 1 / $1::int AS v`, [0], 'failing_probe')).rejects.toThrow(/division by zero/);
    expect(await mode()).toBe('auto');
    await expect(database.transaction(async (tx) => {
      await tx.query(`SELECT $1::text AS v`, ['in tx'], 'mode_probe');
      await tx.query(`SELECT 1 / $1::int AS v`, [0], 'failing_probe');
    })).rejects.toThrow(/division by zero/);
    expect(await mode()).toBe('auto');
  });
});
