import { crc32 } from 'node:zlib';
import type { ExpectedVersion } from '../event-store.js';
import type { PreparedAppend } from '../prepared-append.js';

/**
 * The record format of an outage-spool segment file. A segment is a run of records, each
 *
 *   magic (u32 LE, "SYSP") · payload length (u32 LE) · crc32 of the payload (u32 LE) · payload
 *
 * and the payload is one prepared append's JSON document, exactly as the append statement receives it
 * (its event ids pinned), so draining re-sends the very bytes that could not be committed. The magic lets
 * a reader find the next record after a damaged one: that is how a torn tail (the last batch of a
 * process that died mid-write, nothing valid after it) is told from damage in the middle of a file.
 */
export const RECORD_MAGIC = 0x50535953; // "SYSP" little-endian
export const RECORD_HEADER_BYTES = 12;
/** Larger than any append the group committer takes (its batches are bounded at 2 MiB), far below u32. */
export const MAX_RECORD_PAYLOAD_BYTES = 64 * 1024 * 1024;

export function encodeRecord(payload: string): Buffer {
  const body = Buffer.from(payload, 'utf8');
  if (body.length > MAX_RECORD_PAYLOAD_BYTES) throw new Error(`a spool record of ${body.length} bytes is over the ${MAX_RECORD_PAYLOAD_BYTES}-byte limit`);
  const record = Buffer.allocUnsafe(RECORD_HEADER_BYTES + body.length);
  record.writeUInt32LE(RECORD_MAGIC, 0);
  record.writeUInt32LE(body.length, 4);
  record.writeUInt32LE(crc32(body), 8);
  body.copy(record, RECORD_HEADER_BYTES);
  return record;
}

export interface SegmentScan {
  /** Intact records in file order. */
  payloads: string[];
  /** Bytes after the last intact record that belong to no intact record: a write the process did not finish. */
  tornTailBytes: number;
  /** Offsets of damaged records that intact ones follow: not a torn write, so an operator must look. */
  corruptAt: number[];
}

/** Reads every intact record of a segment; a damaged one is skipped up to the next record that checks out. */
export function scanSegment(bytes: Buffer): SegmentScan {
  const payloads: string[] = [];
  const corruptAt: number[] = [];
  let offset = 0;
  let damagedSince: number | null = null;
  while (offset < bytes.length) {
    const length = recordLengthAt(bytes, offset);
    if (length !== null) {
      if (damagedSince !== null) corruptAt.push(damagedSince);
      damagedSince = null;
      payloads.push(bytes.toString('utf8', offset + RECORD_HEADER_BYTES, offset + RECORD_HEADER_BYTES + length));
      offset += RECORD_HEADER_BYTES + length;
      continue;
    }
    damagedSince ??= offset;
    offset = nextMagic(bytes, offset + 1);
  }
  return { payloads, tornTailBytes: damagedSince === null ? 0 : bytes.length - damagedSince, corruptAt };
}

/** The payload length of an intact record starting at `offset`, or null. */
function recordLengthAt(bytes: Buffer, offset: number): number | null {
  if (offset + RECORD_HEADER_BYTES > bytes.length) return null;
  if (bytes.readUInt32LE(offset) !== RECORD_MAGIC) return null;
  const length = bytes.readUInt32LE(offset + 4);
  if (length > MAX_RECORD_PAYLOAD_BYTES || offset + RECORD_HEADER_BYTES + length > bytes.length) return null;
  const start = offset + RECORD_HEADER_BYTES;
  return crc32(bytes.subarray(start, start + length)) === bytes.readUInt32LE(offset + 8) ? length : null;
}

function nextMagic(bytes: Buffer, from: number): number {
  const magic = Buffer.from([0x53, 0x59, 0x53, 0x50]);
  const found = bytes.indexOf(magic, from);
  return found === -1 ? bytes.length : found;
}

/** A spooled payload back into the prepared append it was (ids, types and the exact JSON the store receives). */
export function preparedFromPayload(payload: string): PreparedAppend {
  const document = JSON.parse(payload) as { s: unknown; x: unknown; e: unknown };
  if (typeof document.s !== 'string' || typeof document.x !== 'number' || !Array.isArray(document.e)) {
    throw new Error('a spool record is not a prepared append');
  }
  const events = document.e as Array<{ i?: unknown; t?: unknown }>;
  const eventIds = events.map((event) => String(event.i));
  const eventTypes = events.map((event) => String(event.t));
  return { streamId: document.s, expectedVersion: decodeExpected(document.x), eventIds, eventTypes, json: payload };
}

/** The inverse of prepareAppend's encoding (0 reads back as no-stream, which is what it means). */
function decodeExpected(encoded: number): ExpectedVersion {
  if (encoded === -1) return 'any';
  if (encoded === -3) return 'stream-exists';
  return encoded === 0 ? 'no-stream' : encoded;
}
