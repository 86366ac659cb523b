/** Anything that runs a statement: a Database, a pg.Client wrapper, a PGlite session. */
interface Executor {
  query<Row = Record<string, unknown>>(sql: string): Promise<Row[]>;
}

/** The id the next transaction that needs one will get (not consuming one). */
export async function nextTransactionId(executor: Executor): Promise<number> {
  const rows = await executor.query<{ next: string }>(`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS next`);
  return Number(rows[0].next);
}

/**
 * Uses up transaction ids until `next` is the next one handed out: each committed transaction that asks
 * for an id consumes one, and a DO block that commits in a loop burns about 200,000 a second on PGlite
 * and on PostgreSQL. Fresh databases start near 750; boundaries like 9,999 → 10,000 need this.
 */
export async function burnTransactionIdsUntil(executor: Executor, next: number): Promise<void> {
  const count = next - (await nextTransactionId(executor));
  if (count < 0) throw new Error(`transaction ids are at ${next - count} already, past ${next}`);
  if (count === 0) return;
  await executor.query(`DO $$ BEGIN FOR i IN 1..${count} LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$`);
}
