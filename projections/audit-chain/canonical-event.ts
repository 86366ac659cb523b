import { createHash, hash } from 'node:crypto';

/**
 * An event exactly as the `events` table stores it: the raw payload (never upcast), the transaction id
 * as a decimal string and `recorded_at` with its full microsecond precision. This, not what a reader
 * of the event store sees, is what the audit chain hashes, so that an auditor can recompute every hash
 * from the table alone.
 */
export interface StoredEvent {
  globalPosition: number;
  transactionId: string;
  streamId: string;
  streamVersion: number;
  eventId: string;
  type: string;
  schemaVersion: number;
  data: unknown;
  metadata: unknown;
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ` in UTC. */
  recordedAt: string;
}

/** Selects the columns of `events` as `storedEvent()` reads them. */
export const STORED_EVENT_COLUMNS = `global_position::text AS global_position, transaction_id::text AS transaction_id,
  stream_id, stream_version, event_id::text AS event_id, event_type, schema_version, data, metadata,
  to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS recorded_at`;

export interface StoredEventRow {
  global_position: string;
  transaction_id: string;
  stream_id: string;
  stream_version: number;
  event_id: string;
  event_type: string;
  schema_version: number;
  data: unknown;
  metadata: unknown;
  recorded_at: string;
}

export function storedEvent(row: StoredEventRow): StoredEvent {
  return {
    globalPosition: Number(row.global_position),
    transactionId: row.transaction_id,
    streamId: row.stream_id,
    streamVersion: Number(row.stream_version),
    eventId: row.event_id,
    type: row.event_type,
    schemaVersion: Number(row.schema_version),
    data: row.data,
    metadata: row.metadata,
    recordedAt: row.recorded_at,
  };
}

/**
 * The canonical encoding (version 1): the JSON Canonicalization Scheme (RFC 8785) of the object
 * `{data, eventId, globalPosition, metadata, recordedAt, schemaVersion, streamId, streamVersion,
 * transactionId, type}` — object keys sorted by UTF-16 code units at every level (integer-like keys
 * too, which JSON.stringify alone would put first), no whitespace, strings and numbers as ECMAScript's
 * JSON.stringify writes them. jsonb does not keep key order, so nothing may depend on it. The README's
 * offline verifier is this same function.
 */
export function canonicalEvent(event: StoredEvent): string {
  return jcs(event);
}

/**
 * Written as loops appending to one string (no per-level arrays, closures or joins): the audit chain
 * encodes every event the serving node appends. The output is byte for byte what the README's
 * one-line verifier (`map`/`sort`/`join`) gives, including its treatment of `undefined`, which a row
 * read back from jsonb never holds.
 */
function jcs(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return scalar(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      // join() writes an undefined element as nothing
      const element = jcs(value[i]) as string | undefined;
      if (element !== undefined) out += element;
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  sortKeys(keys);
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) out += ',';
    out += `${quotedKey(keys[i])}:${jcs(record[keys[i]])}`;
  }
  return `${out}}`;
}

/** A string JSON.stringify writes as it is, between quotes: no quote, backslash, control character or surrogate. */
const PLAIN_STRING = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/**
 * A scalar as JSON.stringify writes it, without calling it for the common cases: most of an event's
 * values are plain strings and finite numbers, and a call into the built-in for each cost a third of
 * the encoding.
 */
function scalar(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return PLAIN_STRING.test(value) ? `"${value}"` : JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? `${value}` : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      return JSON.stringify(value);
  }
}

/** Above this many keys the built-in sort is faster than sorting in place. */
const INSERTION_SORT_MAX = 24;

/**
 * Sorts by UTF-16 code units, as `Array.prototype.sort()` without a comparator does (and `<` on strings
 * compares): in place for the few keys of an event's objects, since the built-in sort allocates a work
 * array per call and the chain sorts every object of every event the log takes.
 */
function sortKeys(keys: string[]): void {
  const n = keys.length;
  if (n > INSERTION_SORT_MAX) {
    keys.sort();
    return;
  }
  for (let i = 1; i < n; i++) {
    const key = keys[i];
    let j = i - 1;
    while (j >= 0 && keys[j] > key) {
      keys[j + 1] = keys[j];
      j--;
    }
    keys[j + 1] = key;
  }
}

/**
 * Keys repeat from event to event (the events' field names), and quoting is a good part of encoding
 * one: the quoted forms are kept, up to a bound, so that keys a client chose cannot grow it.
 */
const quotedKeys = new Map<string, string>();
const MAX_QUOTED_KEYS = 4096;

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size < MAX_QUOTED_KEYS) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/** The hash of the empty chain: the `prev_hash` of the first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * `sha256(prev_hash as 32 raw bytes ‖ UTF-8 of the canonical event)`, as lowercase hex. One buffer and
 * the one-shot `hash` (no Hash object per event: the chain hashes every event the log takes).
 */
export function chainHash(prevHash: string, canonical: string): string {
  const input = Buffer.allocUnsafe(32 + Buffer.byteLength(canonical, 'utf8'));
  // A stored hash that is not 64 hex digits (a tampered row the verifier reads) hashes as its valid prefix, as ever.
  if (prevHash.length !== 64 || input.write(prevHash, 0, 'hex') !== 32) {
    return createHash('sha256').update(Buffer.from(prevHash, 'hex')).update(canonical, 'utf8').digest('hex');
  }
  input.write(canonical, 32, 'utf8');
  return hash('sha256', input, 'hex');
}
