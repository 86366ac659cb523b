import type { SqlExecutor } from '../../src/kernel/index.js';
import { checkpointRecord, type CheckpointRecord } from './audit-verifier.js';

export interface CheckpointPage {
  data: CheckpointRecord[];
  /** `before=` for the next (older) page; null on the last one. */
  nextBefore: number | null;
}

/**
 * The signed audit checkpoints, newest first, in keyset pages on their sequence (the table's primary key):
 * a page reads `limit + 1` index entries however many checkpoints years of signing left.
 */
export async function checkpointPage(database: SqlExecutor, query: { before?: number; limit: number }): Promise<CheckpointPage> {
  const rows = await database.query<Parameters<typeof checkpointRecord>[0]>(
    `SELECT k.sequence::text AS sequence, k.global_position::text AS global_position, k.hash, k.algorithm, k.key_id, k.signature, k.signed_at
     FROM audit_checkpoints k ${query.before !== undefined ? 'WHERE k.sequence < $2' : ''}
     ORDER BY k.sequence DESC LIMIT $1`,
    query.before !== undefined ? [query.limit + 1, query.before] : [query.limit + 1],
  );
  const data = rows.slice(0, query.limit).map(checkpointRecord);
  return { data, nextBefore: rows.length > query.limit ? data[data.length - 1].sequence : null };
}
