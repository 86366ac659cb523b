import { READ_HORIZON_SQL, type SqlExecutor } from '../../src/kernel/index.js';
import { type CheckpointSigner, GENESIS_HASH, STORED_EVENT_COLUMNS, type StoredEvent, type StoredEventRow, canonicalEvent, chainHash, storedEvent } from '../../projections/audit-chain/index.js';

export type AuditProblemKind =
  | 'altered' // the event at a position no longer hashes to its chain entry
  | 'missing' // a chained event is gone from the log
  | 'reordered' // a chained event now sits at another place in the global order
  | 'inserted' // an event sits where the chain has another one, and the chain never saw it
  | 'chain-altered' // a chain row does not link to its predecessor
  | 'checkpoint-mismatch' // the log recomputes to another hash than a signed checkpoint attests
  | 'truncated' // a signed checkpoint lies beyond the end of the log
  | 'bad-signature' // a checkpoint's signature does not verify
  | 'unverifiable-checkpoint'; // signed with another key than the one configured

export interface AuditProblem {
  kind: AuditProblemKind;
  /** The global position to look at (for a range, its last position). */
  globalPosition: number | null;
  sequence: number | null;
  message: string;
}

export interface CheckpointRecord {
  sequence: number;
  globalPosition: number;
  hash: string;
  algorithm: string;
  keyId: string;
  signature: string;
  signedAt: string;
}

export interface AuditReport {
  ok: boolean;
  /**
   * Where the recomputation started: null from the first event (the whole chain), or the signed checkpoint it
   * trusted (`since: 'latest-checkpoint'`) — events up to it were not recomputed this time.
   */
  since: { sequence: number; globalPosition: number } | null;
  /** Events recomputed and matched against their chain entries. */
  verifiedEvents: number;
  /** Committed events the chain has not reached yet (recomputed, checked against checkpoints). */
  pendingEvents: number;
  head: { sequence: number; globalPosition: number; hash: string } | null;
  checkpoints: { verified: number; signaturesChecked: boolean; latest: CheckpointRecord | null };
  problem: AuditProblem | null;
}

export interface VerifyOptions {
  /** A checkpoint kept outside the database (`switchyard audit checkpoint`); it must verify too. */
  external?: CheckpointRecord | null;
  /**
   * `genesis` (default): recompute every event. `latest-checkpoint`: start at the newest signed checkpoint —
   * its signature checked, the chain entry and the event at it matching what it attests — and recompute only
   * what came after: seconds instead of minutes on a long log, but an event altered before that checkpoint
   * (with its chain entries left alone) is only found by a verification from the genesis.
   */
  since?: 'genesis' | 'latest-checkpoint';
  pageSize?: number;
}

/** A checkpoint kept outside the database is checked where the walk reaches it: a walk from the latest stored one may start past it. */
export class AuditScopeError extends Error {
  constructor() {
    super('a checkpoint kept outside the database is verified from the genesis: leave out "since: latest-checkpoint" with it');
  }
}

interface ChainRow {
  sequence: number;
  globalPosition: number;
  eventId: string;
  prevHash: string;
  hash: string;
}

/**
 * `switchyard audit verify`: recomputes the chain from the `events` table itself, in global order, and
 * compares it with the projection's rows and with every signed checkpoint. The first difference is
 * reported with the position it concerns. It never trusts `audit_chain` alone: a rewritten chain still
 * contradicts the signatures.
 */
export class AuditVerifier {
  constructor(
    private readonly database: { transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> },
    private readonly signer: CheckpointSigner | null,
  ) {}

  verify(options: VerifyOptions = {}): Promise<AuditReport> {
    if (options.since === 'latest-checkpoint' && options.external) return Promise.reject(new AuditScopeError());
    // One snapshot for the log, the chain and the checkpoints, so a live gateway cannot skew the comparison.
    return this.database.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      return new Walk(tx, this.signer, options).run();
    });
  }
}

class Walk {
  private readonly pageSize: number;
  private events: StoredEvent[] = [];
  private eventCursor = { transactionId: '0', globalPosition: 0 };
  private eventsDone = false;
  private chain: ChainRow[] = [];
  private chainCursor = 0;
  private chainDone = false;
  private checkpoints: CheckpointRecord[] = [];
  private checkpointCursor = 0;
  private checkpointsDone = false;
  private horizon = '0';
  private readonly report: AuditReport;

  constructor(
    private readonly tx: SqlExecutor,
    private readonly signer: CheckpointSigner | null,
    private readonly options: VerifyOptions,
  ) {
    this.pageSize = options.pageSize ?? 2000;
    this.report = { ok: true, since: null, verifiedEvents: 0, pendingEvents: 0, head: null, checkpoints: { verified: 0, signaturesChecked: Boolean(signer), latest: null }, problem: null };
  }

  async run(): Promise<AuditReport> {
    const [snapshot] = await this.tx.query<{ xmin: string }>(`SELECT ${READ_HORIZON_SQL}::text AS xmin`);
    this.horizon = snapshot.xmin;
    const external = this.options.external ?? null;
    let sequence = 0;
    let prevHash = GENESIS_HASH;
    let lastVerifiedCheckpoint: CheckpointRecord | null = null;
    if (this.options.since === 'latest-checkpoint') {
      const start = await latestCheckpoint(this.tx);
      if (start) {
        const problem = await this.startAt(start);
        if (problem) return this.fail(problem);
        sequence = start.sequence;
        prevHash = start.hash;
        lastVerifiedCheckpoint = start;
      }
    }
    for (;;) {
      const event = await this.peekEvent();
      const entry = await this.peekChain();
      if (!event && !entry) break;
      if (!event && entry) return this.fail(await this.classify(entry, null, entry.sequence));
      const stored = event!;
      let hash: string;
      if (entry) {
        if (entry.eventId !== stored.eventId || entry.globalPosition !== stored.globalPosition) {
          return this.fail(await this.classify(entry, stored, entry.sequence));
        }
        if (entry.prevHash !== prevHash) {
          return this.fail({ kind: 'chain-altered', globalPosition: entry.globalPosition, sequence: entry.sequence,
            message: `the chain entry of position ${entry.globalPosition} (sequence ${entry.sequence}) does not link to the entry before it` });
        }
        hash = chainHash(prevHash, canonicalEvent(stored));
        if (hash !== entry.hash) {
          return this.fail({ kind: 'altered', globalPosition: stored.globalPosition, sequence: entry.sequence,
            message: `the event at position ${stored.globalPosition} (sequence ${entry.sequence}, ${stored.type} on ${stored.streamId}) was altered: it no longer hashes to its chain entry` });
        }
        this.report.verifiedEvents++;
        this.report.head = { sequence: entry.sequence, globalPosition: entry.globalPosition, hash };
        this.chain.shift();
      } else {
        hash = chainHash(prevHash, canonicalEvent(stored));
        this.report.pendingEvents++;
      }
      this.events.shift();
      sequence++;
      prevHash = hash;
      for (const checkpoint of await this.checkpointsAt(sequence, external)) {
        const problem = this.checkCheckpoint(checkpoint, stored, hash, lastVerifiedCheckpoint);
        if (problem) return this.fail(problem);
        if (checkpoint !== external) {
          lastVerifiedCheckpoint = checkpoint;
          this.report.checkpoints.verified++;
          this.report.checkpoints.latest = checkpoint;
        }
      }
    }
    // Whatever is attested beyond the last event was cut away.
    const beyond = [...(await this.checkpointsAt(Number.MAX_SAFE_INTEGER, null)), ...(external && external.sequence > sequence ? [external] : [])];
    if (beyond.length > 0) {
      const first = beyond[0];
      return this.fail({ kind: 'truncated', globalPosition: first.globalPosition, sequence: first.sequence,
        message: `the log was truncated: a signed checkpoint attests sequence ${first.sequence} (position ${first.globalPosition}), but the log ends at sequence ${sequence}` +
          (this.report.head ? ` (position ${this.report.head.globalPosition})` : '') });
    }
    return this.report;
  }

  /**
   * Trusts `checkpoint` as the start of the walk, once it holds: its signature verifies, the chain entry at its
   * sequence is the hash it attests, and the event at its position still hashes to that entry. The cursors then
   * start after it.
   */
  private async startAt(checkpoint: CheckpointRecord): Promise<AuditProblem | null> {
    const signature = this.signatureProblem(checkpoint);
    if (signature) return signature;
    const at = `the checkpoint signed at sequence ${checkpoint.sequence} (position ${checkpoint.globalPosition})`;
    const [entry] = await this.tx.query<{ global_position: string; event_id: string; prev_hash: string; hash: string }>(
      `SELECT c.global_position::text AS global_position, c.event_id::text AS event_id, c.prev_hash, c.hash FROM audit_chain c WHERE c.sequence = $1`,
      [checkpoint.sequence],
    );
    if (!entry || Number(entry.global_position) !== checkpoint.globalPosition || entry.hash !== checkpoint.hash) {
      return { kind: 'checkpoint-mismatch', globalPosition: checkpoint.globalPosition, sequence: checkpoint.sequence,
        message: `the chain no longer holds what ${at} attests: its entry there was altered or removed (verify from the genesis to find the first difference)` };
    }
    const [row] = await this.tx.query<StoredEventRow>(`SELECT ${STORED_EVENT_COLUMNS} FROM events WHERE events.global_position = $1::bigint`, [checkpoint.globalPosition]);
    const event = row ? storedEvent(row) : null;
    if (!event || event.eventId !== entry.event_id) {
      return { kind: event ? 'reordered' : 'missing', globalPosition: checkpoint.globalPosition, sequence: checkpoint.sequence,
        message: `the event chained at ${at} (event ${entry.event_id}) is ${event ? 'no longer at that position' : 'missing from the log'}` };
    }
    if (chainHash(entry.prev_hash, canonicalEvent(event)) !== entry.hash) {
      return { kind: 'altered', globalPosition: event.globalPosition, sequence: checkpoint.sequence,
        message: `the event at position ${event.globalPosition} (sequence ${checkpoint.sequence}, ${event.type} on ${event.streamId}) was altered: it no longer hashes to the entry ${at} attests` };
    }
    this.eventCursor = { transactionId: event.transactionId, globalPosition: event.globalPosition };
    this.chainCursor = checkpoint.sequence;
    this.checkpointCursor = checkpoint.sequence;
    this.report.since = { sequence: checkpoint.sequence, globalPosition: checkpoint.globalPosition };
    this.report.head = { sequence: checkpoint.sequence, globalPosition: checkpoint.globalPosition, hash: checkpoint.hash };
    this.report.checkpoints.verified = 1;
    this.report.checkpoints.latest = checkpoint;
    return null;
  }

  private fail(problem: AuditProblem): AuditReport {
    this.report.ok = false;
    this.report.problem = problem;
    return this.report;
  }

  private checkCheckpoint(checkpoint: CheckpointRecord, event: StoredEvent, hash: string, previous: CheckpointRecord | null): AuditProblem | null {
    const signature = this.signatureProblem(checkpoint);
    if (signature) return signature;
    if (checkpoint.globalPosition !== event.globalPosition || checkpoint.hash !== hash) {
      const after = previous ? ` after position ${previous.globalPosition} (sequence ${previous.sequence})` : '';
      return { kind: 'checkpoint-mismatch', globalPosition: checkpoint.globalPosition, sequence: checkpoint.sequence,
        message: `the log no longer matches the checkpoint signed at sequence ${checkpoint.sequence} (position ${checkpoint.globalPosition}): ` +
          `an event up to that position${after} was altered, removed or reordered, and the chain rewritten to hide it` };
    }
    return null;
  }

  /** Whether the checkpoint is signed with the configured key, and its signature verifies (nothing to check without a key). */
  private signatureProblem(checkpoint: CheckpointRecord): AuditProblem | null {
    if (this.signer) {
      if (checkpoint.algorithm !== this.signer.algorithm || checkpoint.keyId !== this.signer.keyId) {
        return { kind: 'unverifiable-checkpoint', globalPosition: checkpoint.globalPosition, sequence: checkpoint.sequence,
          message: `the checkpoint at sequence ${checkpoint.sequence} is signed with ${checkpoint.algorithm} key ${checkpoint.keyId}, not the configured ${this.signer.algorithm} key ${this.signer.keyId}` };
      }
      if (!this.signer.verify({ sequence: checkpoint.sequence, globalPosition: checkpoint.globalPosition, hash: checkpoint.hash }, checkpoint.signature)) {
        return { kind: 'bad-signature', globalPosition: checkpoint.globalPosition, sequence: checkpoint.sequence,
          message: `the signature of the checkpoint at sequence ${checkpoint.sequence} (position ${checkpoint.globalPosition}) does not verify` };
      }
    }
    return null;
  }

  /** Names what happened where the log and the chain disagree about which event comes next. */
  private async classify(entry: ChainRow, event: StoredEvent | null, sequence: number): Promise<AuditProblem> {
    const [moved] = await this.tx.query<{ global_position: string }>(
      `SELECT global_position::text AS global_position FROM events WHERE event_id = $1::uuid`, [entry.eventId],
    );
    if (!moved) {
      return { kind: 'missing', globalPosition: entry.globalPosition, sequence,
        message: `the event chained at position ${entry.globalPosition} (sequence ${sequence}, event ${entry.eventId}) is missing from the log` };
    }
    if (event) {
      const [known] = await this.tx.query<{ sequence: string }>(`SELECT sequence::text AS sequence FROM audit_chain WHERE event_id = $1::uuid`, [event.eventId]);
      if (!known) {
        return { kind: 'inserted', globalPosition: event.globalPosition, sequence,
          message: `an event the chain never saw (${event.eventId}) appears at position ${event.globalPosition}, where the chain has sequence ${sequence}` };
      }
    }
    const elsewhere = Number(moved.global_position) !== entry.globalPosition ? ` (it is now stored at position ${moved.global_position})` : '';
    return { kind: 'reordered', globalPosition: entry.globalPosition, sequence,
      message: `the global order was changed at sequence ${sequence}: the chain has position ${entry.globalPosition} there${elsewhere}, ` +
        (event ? `the log now has position ${event.globalPosition}` : 'the log has nothing') };
  }

  private async peekEvent(): Promise<StoredEvent | null> {
    if (this.events.length === 0 && !this.eventsDone) {
      const rows = await this.tx.query<StoredEventRow>(
        // Order by the table's columns: the select list renames them to text, and ORDER BY would take those.
        `SELECT ${STORED_EVENT_COLUMNS} FROM events
         WHERE (events.transaction_id, events.global_position) > ($1::text::xid8, $2::bigint) AND events.transaction_id < $3::text::xid8
         ORDER BY events.transaction_id, events.global_position LIMIT $4`,
        [this.eventCursor.transactionId, this.eventCursor.globalPosition, this.horizon, this.pageSize],
      );
      this.events = rows.map(storedEvent);
      this.eventsDone = rows.length < this.pageSize;
      const last = this.events[this.events.length - 1];
      if (last) this.eventCursor = { transactionId: last.transactionId, globalPosition: last.globalPosition };
    }
    return this.events[0] ?? null;
  }

  private async peekChain(): Promise<ChainRow | null> {
    if (this.chain.length === 0 && !this.chainDone) {
      const rows = await this.tx.query<{ sequence: string; global_position: string; event_id: string; prev_hash: string; hash: string }>(
        `SELECT c.sequence::text AS sequence, c.global_position::text AS global_position, c.event_id::text AS event_id, c.prev_hash, c.hash
         FROM audit_chain c WHERE c.sequence > $1 ORDER BY c.sequence LIMIT $2`,
        [this.chainCursor, this.pageSize],
      );
      this.chain = rows.map((row) => ({
        sequence: Number(row.sequence), globalPosition: Number(row.global_position), eventId: row.event_id, prevHash: row.prev_hash, hash: row.hash,
      }));
      this.chainDone = rows.length < this.pageSize;
      const last = this.chain[this.chain.length - 1];
      if (last) this.chainCursor = last.sequence;
    }
    return this.chain[0] ?? null;
  }

  /** Stored checkpoints with a sequence up to `sequence` not yet returned (and the external one, when due). */
  private async checkpointsAt(sequence: number, external: CheckpointRecord | null): Promise<CheckpointRecord[]> {
    const due: CheckpointRecord[] = [];
    for (;;) {
      if (this.checkpoints.length === 0 && !this.checkpointsDone) {
        const rows = await this.tx.query<{ sequence: string; global_position: string; hash: string; algorithm: string; key_id: string; signature: string; signed_at: Date | string }>(
          `SELECT k.sequence::text AS sequence, k.global_position::text AS global_position, k.hash, k.algorithm, k.key_id, k.signature, k.signed_at
           FROM audit_checkpoints k WHERE k.sequence > $1 ORDER BY k.sequence LIMIT $2`,
          [this.checkpointCursor, this.pageSize],
        );
        this.checkpoints = rows.map(checkpointRecord);
        this.checkpointsDone = rows.length < this.pageSize;
        const last = this.checkpoints[this.checkpoints.length - 1];
        if (last) this.checkpointCursor = last.sequence;
      }
      const next = this.checkpoints[0];
      if (!next || next.sequence > sequence) break;
      due.push(this.checkpoints.shift()!);
    }
    if (external && external.sequence === sequence) due.push(external);
    return due;
  }
}

export function checkpointRecord(row: { sequence: string; global_position: string; hash: string; algorithm: string; key_id: string; signature: string; signed_at: Date | string }): CheckpointRecord {
  return {
    sequence: Number(row.sequence),
    globalPosition: Number(row.global_position),
    hash: row.hash,
    algorithm: row.algorithm,
    keyId: row.key_id,
    signature: row.signature,
    signedAt: new Date(row.signed_at).toISOString(),
  };
}

/** A checkpoint kept outside the database (the JSON `switchyard audit checkpoint` printed), checked field by field. */
export function parseCheckpoint(text: string): CheckpointRecord {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error('the checkpoint is not JSON');
  }
  if (value === null || typeof value !== 'object') throw new Error('the checkpoint is not a JSON object');
  const fields = ['sequence', 'globalPosition', 'hash', 'algorithm', 'keyId', 'signature'];
  for (const field of fields) if (value[field] === undefined) throw new Error(`the checkpoint file lacks "${field}"`);
  return {
    sequence: Number(value.sequence), globalPosition: Number(value.globalPosition), hash: String(value.hash), algorithm: String(value.algorithm),
    keyId: String(value.keyId), signature: String(value.signature), signedAt: String(value.signedAt ?? ''),
  };
}

export const NO_CHECKPOINT = 'No signed checkpoint yet (set SWITCHYARD_AUDIT_SIGNING_KEY on the serving nodes).';

/** The newest signed checkpoint in the database, or null when none was written yet. */
export async function latestCheckpoint(database: SqlExecutor): Promise<CheckpointRecord | null> {
  const rows = await database.query<Parameters<typeof checkpointRecord>[0]>(
    `SELECT k.sequence::text AS sequence, k.global_position::text AS global_position, k.hash, k.algorithm, k.key_id, k.signature, k.signed_at
     FROM audit_checkpoints k ORDER BY k.sequence DESC LIMIT 1`,
  );
  return rows[0] ? checkpointRecord(rows[0]) : null;
}

/** Why there is no public key to verify checkpoints with, or null when the signer has one. */
export function publicKeyProblem(signer: CheckpointSigner | null): string | null {
  if (signer?.publicKeyPem()) return null;
  return signer ? 'The audit signing key is an HMAC key: auditors verify checkpoints with the key itself.' : 'SWITCHYARD_AUDIT_SIGNING_KEY is not set.';
}
