import type { SqlExecutor } from '../../src/kernel/index.js';
import { type CheckpointSigner, STORED_EVENT_COLUMNS, type StoredEventRow, storedEvent } from '../../projections/audit-chain/index.js';
import { checkpointRecord } from './audit-verifier.js';

export const EXPORT_FORMAT = 'switchyard-audit-export/v1';

export interface ExportRange {
  /** Global positions (inclusive); the export runs in chain order from the entry of `from` to that of `to`. */
  from?: number;
  to?: number;
}

export class ExportRangeError extends Error {
  override readonly name = 'ExportRangeError';
}

/**
 * `switchyard audit export`: NDJSON lines, a header, then one `event` line per chain entry (the event as
 * stored, its sequence, prev_hash and hash) with every signed checkpoint of the range after the entry it
 * attests. The range is contiguous in chain order, so the `prevHash` links can be checked line by line;
 * commits finish out of identity order, so it may contain positions outside [from, to] — never fewer.
 */
export async function* exportAudit(database: SqlExecutor, range: ExportRange, signer: CheckpointSigner | null, pageSize = 1000): AsyncGenerator<string> {
  const first = await sequenceAt(database, range.from, 'first');
  const last = await sequenceAt(database, range.to, 'last');
  if (first !== null && last !== null && first > last) throw new ExportRangeError(`--from position ${range.from} comes after --to position ${range.to} in the global order`);
  yield JSON.stringify({
    type: 'header',
    format: EXPORT_FORMAT,
    canonicalEncoding: 'RFC 8785 (JCS) of the event object',
    hash: 'sha256(prevHash as 32 bytes || UTF-8 canonical event), hex',
    checkpointMessage: 'switchyard-audit-checkpoint/v1\\n{sequence}\\n{globalPosition}\\n{hash}',
    fromSequence: first,
    toSequence: last,
    algorithm: signer?.algorithm ?? null,
    keyId: signer?.keyId ?? null,
    publicKey: signer?.publicKeyPem() ?? null,
    exportedAt: new Date().toISOString(),
  });
  if (first === null || last === null) return;
  for (let cursor = first - 1; cursor < last;) {
    const rows = await database.query<StoredEventRow & { sequence: string; chain_position: string; prev_hash: string; hash: string }>(
      `SELECT c.sequence::text AS sequence, c.global_position::text AS chain_position, c.prev_hash, c.hash, e.*
       FROM audit_chain c
       LEFT JOIN LATERAL (SELECT ${STORED_EVENT_COLUMNS} FROM events ev
                          WHERE ev.transaction_id = c.transaction_id AND ev.global_position = c.global_position) e ON true
       WHERE c.sequence > $1 AND c.sequence <= $2 ORDER BY c.sequence LIMIT $3`,
      [cursor, last, pageSize],
    );
    if (rows.length === 0) break;
    const from = Number(rows[0].sequence);
    const to = Number(rows[rows.length - 1].sequence);
    const checkpoints = (await database.query<Parameters<typeof checkpointRecord>[0]>(
      `SELECT sequence::text AS sequence, global_position::text AS global_position, hash, algorithm, key_id, signature, signed_at
       FROM audit_checkpoints WHERE sequence BETWEEN $1 AND $2`,
      [from, to],
    )).map(checkpointRecord);
    const bySequence = new Map(checkpoints.map((checkpoint) => [checkpoint.sequence, checkpoint]));
    for (const row of rows) {
      const sequence = Number(row.sequence);
      yield JSON.stringify({
        type: 'event',
        sequence,
        globalPosition: Number(row.chain_position),
        prevHash: row.prev_hash,
        hash: row.hash,
        // A chained event that is gone from the log is exported as null: the auditor sees the hole.
        event: row.event_id ? storedEvent(row) : null,
      });
      const checkpoint = bySequence.get(sequence);
      if (checkpoint) yield JSON.stringify({ type: 'checkpoint', ...checkpoint });
    }
    cursor = to;
  }
}

async function sequenceAt(database: SqlExecutor, position: number | undefined, end: 'first' | 'last'): Promise<number | null> {
  if (position === undefined) {
    const [row] = await database.query<{ sequence: string | null }>(
      `SELECT ${end === 'first' ? 'min' : 'max'}(sequence)::text AS sequence FROM audit_chain`,
    );
    return row?.sequence ? Number(row.sequence) : null;
  }
  const [row] = await database.query<{ sequence: string }>(`SELECT sequence::text AS sequence FROM audit_chain WHERE global_position = $1`, [position]);
  if (!row) throw new ExportRangeError(`position ${position} is not in the audit chain (not an event, or not chained yet: see switchyard projections status)`);
  return Number(row.sequence);
}
