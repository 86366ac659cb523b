import { ALL_EVENT_TYPES, type DurableProjection, type ProjectionReplacement, type RecordedEvent, type SqlExecutor, nextEventLoopTurn, xid8Param } from '../../src/kernel/index.js';
import { GENESIS_HASH, STORED_EVENT_COLUMNS, type StoredEvent, type StoredEventRow, canonicalEvent, chainHash, storedEvent } from './canonical-event.js';
import type { CheckpointSigner } from './checkpoint-signer.js';

interface ChainEntry {
  sequence: number;
  globalPosition: number;
  transactionId: string;
  eventId: string;
  prevHash: string;
  hash: string;
}

/**
 * The hash-chained audit trail (DESIGN §5): every event, in global order, chained as
 * `hash = sha256(prev_hash ‖ canonical event)` over the row as stored. With a signing key it ends a batch
 * with a signed checkpoint when the newest one is older than the interval, so that cutting away the tail
 * of the log (events and chain rows alike) leaves a checkpoint that no longer matches.
 */
export class AuditChainProjection implements DurableProjection {
  readonly name = 'audit-chain';
  readonly eventTypes = ALL_EVENT_TYPES;
  /** The chain's head after this projection's last batch; null when it must be read. */
  private head: ChainHead | null = null;
  /** The entries `prepare` chained for the next page, and the head they follow. */
  private prepared: { events: readonly RecordedEvent[]; head: ChainHead; entries: ChainEntry[] } | null = null;

  constructor(
    private readonly signer: CheckpointSigner | null,
    private readonly checkpointIntervalMs: number,
  ) {}

  async handle(manager: SqlExecutor, events: readonly RecordedEvent[]): Promise<void> {
    if (events.length === 0) return;
    const prepared = this.takePrepared(events);
    let byPosition: ReadonlyMap<number, StoredEvent> | null = null;
    const stored = async () => (byPosition ??= await storedEvents(manager, events));
    // The head this projection's previous batch left, if that batch committed (not known here): the
    // insert only lands if it is still the chain's head, and otherwise the head is read and the batch
    // chained again. A batch after a committed one (the usual case) reads nothing first, and was chained
    // by `prepare` before the transaction opened.
    let entries: ChainEntry[] | null = null;
    if (this.head) {
      entries = prepared ?? (await chainEntries(events, await stored(), this.head));
      if (!(await insertAfter(manager, this.head, entries))) entries = null;
    }
    if (!entries) {
      const head = await readHead(manager);
      entries = await chainEntries(events, await stored(), head);
      // The checkpoint row is locked: no one else chains meanwhile, so the head just read must hold.
      if (!(await insertAfter(manager, head, entries))) throw new Error(`audit chain: the head moved from sequence ${head.sequence} while this batch was being chained`);
    }
    const last = entries[entries.length - 1];
    this.head = { sequence: last.sequence, hash: last.hash };
    if (this.signer) await this.checkpointIfDue(manager, entries[entries.length - 1]);
  }

  /**
   * Chains the page from the head the previous batch left, before its transaction opens: the hashing is
   * most of this projection's time, and on the embedded engine every other statement waits while a
   * transaction is open. Only a page whose rows the read carried, after a batch of this process.
   */
  async prepare(events: readonly RecordedEvent[]): Promise<void> {
    this.prepared = null;
    const head = this.head;
    if (!head || events.length === 0 || !events.every((e) => e.stored)) return;
    this.prepared = { events, head, entries: await chainEntries(events, carriedRows(events), head) };
  }

  /**
   * What `prepare` chained, if it was this page and the head it followed is still the one believed (the
   * head is replaced, never changed, by each batch, a resume and a reset).
   */
  private takePrepared(events: readonly RecordedEvent[]): ChainEntry[] | null {
    const prepared = this.prepared;
    this.prepared = null;
    return prepared && prepared.events === events && prepared.head === this.head ? prepared.entries : null;
  }

  /**
   * Rebuilt aside into a copy of `audit_chain` by an instance of its own (its head is its own) that signs
   * nothing: the signed checkpoints attest what the chain was, they are kept as they are, and the rebuilt
   * chain must reproduce them (`audit verify`); the live projection goes on signing after the swap.
   */
  replacement(): ProjectionReplacement {
    return { projection: new AuditChainProjection(null, this.checkpointIntervalMs), tables: [{ name: 'audit_chain' }] };
  }

  /** The runner starts over from the stored checkpoint (a lease taken again, a checkpoint moved, a rebuild swapped in): so does the head. */
  async resume(): Promise<void> {
    this.head = null;
    this.prepared = null;
  }

  private async checkpointIfDue(manager: SqlExecutor, last: ChainEntry): Promise<void> {
    const signer = this.signer!;
    const claim = { sequence: last.sequence, globalPosition: last.globalPosition, hash: last.hash };
    // One statement: sign only when no checkpoint is younger than the interval. A replay that reaches a
    // sequence already attested keeps the original signature (ON CONFLICT DO NOTHING).
    await manager.query(
      `INSERT INTO audit_checkpoints (sequence, global_position, hash, algorithm, key_id, signature)
       SELECT $1, $2, $3, $4, $5, $6
       WHERE NOT EXISTS (SELECT 1 FROM audit_checkpoints WHERE signed_at > now() - make_interval(secs => $7::double precision / 1000))
       ON CONFLICT (sequence) DO NOTHING`,
      [claim.sequence, claim.globalPosition, claim.hash, signer.algorithm, signer.keyId, signer.sign(claim), this.checkpointIntervalMs],
    );
  }
}

interface ChainHead {
  /** 0 for the empty chain. */
  sequence: number;
  hash: string;
}

/**
 * The page's rows as stored (raw payload, microsecond timestamps): the store's read carries them; only a
 * reader that does not (none today) makes the chain read them again.
 */
async function storedEvents(manager: SqlExecutor, events: readonly RecordedEvent[]): Promise<Map<number, StoredEvent>> {
  const byPosition = carriedRows(events);
  const missing = events.filter((e) => !e.stored);
  if (missing.length > 0) {
    const rows: StoredEventRow[] = await manager.query(
      `SELECT ${STORED_EVENT_COLUMNS} FROM events
       WHERE (transaction_id, global_position) IN (SELECT * FROM unnest($1::text[]::xid8[], $2::bigint[]))`,
      [missing.map((e) => xid8Param(e.transactionId)), missing.map((e) => e.globalPosition)],
    );
    for (const row of rows) byPosition.set(Number(row.global_position), storedEvent(row));
  }
  return byPosition;
}

/** The stored rows the store's read carried with the events, by global position. */
function carriedRows(events: readonly RecordedEvent[]): Map<number, StoredEvent> {
  return new Map(events.filter((e) => e.stored).map((e) => [e.globalPosition, asStored(e)]));
}

async function readHead(manager: SqlExecutor): Promise<ChainHead> {
  const rows: Array<{ head: string; hash: string }> = await manager.query(
    `SELECT c.sequence::text AS head, c.hash FROM audit_chain c ORDER BY c.sequence DESC LIMIT 1`,
    undefined,
    'switchyard_audit_head_v1',
  );
  return rows[0] ? { sequence: Number(rows[0].head), hash: rows[0].hash } : { sequence: 0, hash: GENESIS_HASH };
}

/**
 * Events chained between two turns of the event loop. Encoding and hashing an event takes about 10 µs,
 * so a full page (500 events) held the serving node's thread for several milliseconds at a time, and a
 * request that arrived meanwhile waited for all of it (seen as the longest stretches of the gateway's
 * CPU profile at 300 rps, most of them this loop).
 */
const CHAIN_SLICE = 32;

async function chainEntries(events: readonly RecordedEvent[], byPosition: ReadonlyMap<number, StoredEvent>, head: ChainHead): Promise<ChainEntry[]> {
  let sequence = head.sequence;
  let prevHash = head.hash;
  const entries: ChainEntry[] = [];
  for (let i = 0; i < events.length; i++) {
    if (i > 0 && i % CHAIN_SLICE === 0) await nextEventLoopTurn();
    const event = events[i];
    const stored = byPosition.get(event.globalPosition);
    if (!stored) throw new Error(`audit chain: event at global position ${event.globalPosition} vanished while it was being chained`);
    const hash = chainHash(prevHash, canonicalEvent(stored));
    entries.push({ sequence: ++sequence, globalPosition: stored.globalPosition, transactionId: stored.transactionId, eventId: stored.eventId, prevHash, hash });
    prevHash = hash;
  }
  return entries;
}

/**
 * Appends the entries if `head` is still the chain's head (sequence and hash; 0 and no row for the
 * empty chain), in one statement, which runs on every batch (named: planned once per connection).
 * Says whether they were appended. The entries follow the head one by one (sequence = head + n), and
 * each column travels as one comma-separated text (numbers, uuids and hex never hold a comma): the
 * driver would otherwise quote and escape every element of six arrays, for every event the log takes.
 */
async function insertAfter(manager: SqlExecutor, head: ChainHead, entries: readonly ChainEntry[]): Promise<boolean> {
  let positions = '';
  let transactions = '';
  let ids = '';
  let prevHashes = '';
  let hashes = '';
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (entry.sequence !== head.sequence + i + 1) throw new Error(`audit chain: entry ${entry.sequence} does not follow the head at ${head.sequence}`);
    const comma = i === 0 ? '' : ',';
    positions += comma + entry.globalPosition;
    transactions += comma + entry.transactionId;
    ids += comma + entry.eventId;
    prevHashes += comma + entry.prevHash;
    hashes += comma + entry.hash;
  }
  const inserted: unknown[] = await manager.query(
    `INSERT INTO audit_chain (sequence, global_position, transaction_id, event_id, prev_hash, hash)
     SELECT $6::bigint + u.n, u.global_position::bigint, u.transaction_id::xid8, u.event_id::uuid, u.prev_hash, u.hash
     FROM unnest(string_to_array($1::text, ','), string_to_array($2::text, ','), string_to_array($3::text, ','),
                 string_to_array($4::text, ','), string_to_array($5::text, ','))
          WITH ORDINALITY AS u(global_position, transaction_id, event_id, prev_hash, hash, n)
     WHERE coalesce((SELECT c.sequence FROM audit_chain c ORDER BY c.sequence DESC LIMIT 1), 0) = $6::bigint
       AND coalesce((SELECT c.hash FROM audit_chain c ORDER BY c.sequence DESC LIMIT 1), $7::text) = $7::text
     RETURNING sequence`,
    [positions, transactions, ids, prevHashes, hashes, head.sequence, head.hash],
    'switchyard_audit_append_after_v2',
  );
  return inserted.length === entries.length;
}

/** The event as the log stores it, from what the store's read carried. */
function asStored(event: RecordedEvent): StoredEvent {
  const stored = event.stored!;
  return {
    globalPosition: event.globalPosition,
    transactionId: event.transactionId.toString(),
    streamId: event.streamId,
    streamVersion: event.streamVersion,
    eventId: event.eventId,
    type: event.type,
    schemaVersion: stored.schemaVersion,
    data: stored.data,
    metadata: event.metadata,
    recordedAt: stored.recordedAt,
  };
}
