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

/**
 * UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then random bits. Time-ordered ids keep the
 * `events.event_id` unique index append-friendly and make request ids sortable by arrival.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  if (poolOffset + 10 > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const r = poolOffset;
  poolOffset += 10;
  const time = Math.floor(nowMs).toString(16).padStart(12, '0').slice(-12);
  const version = HEX[(pool[r] & 0x0f) | 0x70] + HEX[pool[r + 1]];
  const variant = HEX[(pool[r + 2] & 0x3f) | 0x80] + HEX[pool[r + 3]];
  let tail = '';
  for (let k = r + 4; k < r + 10; k++) tail += HEX[pool[k]];
  return `${time.slice(0, 8)}-${time.slice(8)}-${version}-${variant}-${tail}`;
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
