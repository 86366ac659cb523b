import { randomFillSync, randomInt } from 'node:crypto';

/**
 * Random bytes drawn from the CSPRNG in blocks: one system call per 256 ids instead of one per id (the
 * request path makes several ids per request). Each byte is used for one id only. Cluster workers are
 * separate processes started afresh, so no two share a pool.
 */
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** The id prefix of the last millisecond an id was made in: ids come in bursts within one millisecond. */
let prefixMs = -1;
let prefix = '';

/**
 * UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then random bits. Time-ordered ids keep the
 * `events.event_id` unique index append-friendly and make request ids sortable by arrival.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  if (poolOffset + 10 > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const ms = Math.floor(nowMs);
  if (ms !== prefixMs) {
    const time = ms.toString(16).padStart(12, '0').slice(-12);
    prefix = `${time.slice(0, 8)}-${time.slice(8)}-`;
    prefixMs = ms;
  }
  const p = pool;
  const r = poolOffset;
  poolOffset += 10;
  return prefix + HEX[(p[r] & 0x0f) | 0x70] + HEX[p[r + 1]] + '-' + HEX[(p[r + 2] & 0x3f) | 0x80] + HEX[p[r + 3]] + '-'
    + HEX[p[r + 4]] + HEX[p[r + 5]] + HEX[p[r + 6]] + HEX[p[r + 7]] + HEX[p[r + 8]] + HEX[p[r + 9]];
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniformly random base62 string (rejection-free: randomInt is unbiased). */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
