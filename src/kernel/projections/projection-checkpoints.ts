import type { SqlExecutor } from '../database/database.js';
import { type LogPosition, START, parseXid8, xid8Param } from '../event-store/log-position.js';

/**
 * A session or transaction to run checkpoint statements on: the kernel's executor, which takes a
 * statement name (a TypeORM EntityManager's third argument would be a query runner).
 */
type Executor = SqlExecutor;

interface CheckpointRow {
  transaction_id: string;
  global_position: string;
}

/**
 * `projection_checkpoints` (DESIGN §5): where each durable projection has read up to, as a log position.
 * `transaction_id` is an xid8 column, so checkpoints compare with `events` positions directly, as xid8.
 * The lock and the save run in every batch of every durable projection: they are named statements,
 * parsed and planned once per connection.
 */
export const projectionCheckpoints = {
  async load(executor: Executor, name: string): Promise<LogPosition> {
    const rows = (await executor.query(
      `SELECT transaction_id, global_position::text AS global_position FROM projection_checkpoints WHERE name = $1`,
      [name],
    )) as CheckpointRow[];
    return rows[0] ? toPosition(rows[0]) : START;
  },

  /**
   * Locks the projection's checkpoint for the rest of the transaction and returns it. A missing row is
   * created first, so two writers of a brand-new projection also serialize here (the second waits on
   * the first's insert). The row exists on every batch but a projection's first: it is locked in one
   * statement then, not created-if-missing and then locked in two.
   */
  async lock(executor: Executor, name: string): Promise<LogPosition> {
    const locked = await lockedRow(executor, name);
    if (locked) return toPosition(locked);
    await executor.query(
      `INSERT INTO projection_checkpoints (name, transaction_id, global_position) VALUES ($1, '0'::xid8, 0)
       ON CONFLICT (name) DO NOTHING`,
      [name],
    );
    const created = await lockedRow(executor, name);
    return created ? toPosition(created) : START;
  },

  async save(executor: Executor, name: string, position: LogPosition): Promise<void> {
    await executor.query(
      saveSql('$1', '$2', '$3'),
      [name, xid8Param(position.transactionId), position.globalPosition],
      'switchyard_checkpoint_save_v1',
    );
  },

  /**
   * A page's checkpoint statements as fixed text, for the round trips of its transaction's BEGIN and COMMIT
   * (`TransactionOptions.opening` and `closing`): `opening` is `lock` without the creation of a missing row
   * (`fromLocked` says none was found; `lock` then), `closing` is `save`. Null for a name that cannot be
   * written as a plain literal; the parameterized statements serve it instead.
   */
  pageStatements(name: string, next: LogPosition): { opening: string; closing: string } | null {
    if (!LITERAL_NAME.test(name) || !Number.isSafeInteger(next.globalPosition) || next.globalPosition < 0) return null;
    // A transaction id is a bigint: its decimal text is digits only.
    return { opening: lockSql(`'${name}'`), closing: saveSql(`'${name}'`, `'${xid8Param(next.transactionId)}'`, String(next.globalPosition)) };
  },

  /** The checkpoint the opening statement locked; null when the row does not exist yet. */
  fromLocked(rows: ReadonlyArray<Record<string, unknown>>): LogPosition | null {
    return rows[0] ? toPosition(rows[0] as unknown as CheckpointRow) : null;
  },

  async remove(executor: Executor, name: string): Promise<void> {
    await executor.query(`DELETE FROM projection_checkpoints WHERE name = $1`, [name]);
  },
};

/** Projection names that are a literal as they stand, whatever the server's string settings: no quote, no backslash. */
const LITERAL_NAME = /^[A-Za-z0-9_.:-]+$/;

/** The checkpoint's lock and save, with the name and values as parameters (`$1`…) or as literals. */
function lockSql(name: string): string {
  return `SELECT transaction_id, global_position::text AS global_position FROM projection_checkpoints WHERE name = ${name} FOR UPDATE`;
}

function saveSql(name: string, transactionId: string, globalPosition: string): string {
  return `INSERT INTO projection_checkpoints (name, transaction_id, global_position, updated_at)
       VALUES (${name}, ${transactionId}::xid8, ${globalPosition}, now())
       ON CONFLICT (name) DO UPDATE SET transaction_id = EXCLUDED.transaction_id,
         global_position = EXCLUDED.global_position, updated_at = now()`;
}

async function lockedRow(executor: Executor, name: string): Promise<CheckpointRow | undefined> {
  const rows = (await executor.query(
    lockSql('$1'),
    [name],
    'switchyard_checkpoint_lock_v1',
  )) as CheckpointRow[];
  return rows[0];
}

function toPosition(row: CheckpointRow): LogPosition {
  return { transactionId: parseXid8(row.transaction_id), globalPosition: Number(row.global_position) };
}
