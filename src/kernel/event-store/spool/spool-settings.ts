import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { declareSettings } from '../../setting-declaration.js';

/** Where and how much a serving process may spool while PostgreSQL is unreachable (docs/operations.md "PostgreSQL outages"). */
export interface SpoolSettings {
  /** `SWITCHYARD_SPOOL_DIR`: the root; each process takes a slot below it, per event store. */
  directory: string;
  /** `SWITCHYARD_SPOOL_MAX_BYTES`: the bound on spooled bytes; 0 = no spool (requests fail while the store is down). */
  maxBytes: number;
  /** A segment is closed and a new one begun past this size (drained segments are deleted whole). */
  segmentBytes: number;
}

export const DEFAULT_SPOOL_MAX_BYTES = 256 * 1024 * 1024;
export const DEFAULT_SPOOL_SEGMENT_BYTES = 8 * 1024 * 1024;

/** The default root: `spool/` in the data directory, or the system's temporary directory when there is none. */
export function defaultSpoolDirectory(dataDir: string): string {
  return dataDir === ':memory:' ? join(tmpdir(), 'switchyard-spool') : join(dataDir, 'spool');
}

export function defaultSpoolSettings(dataDir: string): SpoolSettings {
  return { directory: defaultSpoolDirectory(dataDir), maxBytes: DEFAULT_SPOOL_MAX_BYTES, segmentBytes: DEFAULT_SPOOL_SEGMENT_BYTES };
}

/** The outage spool's environment variables (read by the bootstrap's environment). */
export const SPOOL_ENVIRONMENT = declareSettings('src/kernel/event-store/spool', {
  SWITCHYARD_SPOOL_DIR: {
    type: 'directory',
    default: '`spool/` in SWITCHYARD_DATA_DIR (the system temporary directory when it is `:memory:`)',
    meaning: "the outage spool's root (PostgreSQL deployments): request events wait here while PostgreSQL is unreachable and drain, idempotently, once it is back",
  },
  SWITCHYARD_SPOOL_MAX_BYTES: {
    type: 'integer ≥ 0 (bytes)',
    default: `\`${DEFAULT_SPOOL_MAX_BYTES}\` (${DEFAULT_SPOOL_MAX_BYTES / 1024 / 1024} MiB)`,
    meaning: 'most bytes of request events a serving process spools during an outage; `0` = no spool (requests fail with 503 while the store is down)',
  },
});

/**
 * Names the event store a spool belongs to: a hash of its URL without the password (which may rotate),
 * so a spool is only ever drained into the store whose events it holds.
 */
export function spoolStoreKey(databaseUrl: string): string {
  let identity = databaseUrl;
  try {
    const url = new URL(databaseUrl);
    url.password = '';
    identity = `${url.protocol}//${url.username}@${url.host}${url.pathname}`;
  } catch {
    // not a URL (a libpq key/value string): the whole string, hashed
  }
  return createHash('sha256').update(identity).digest('hex').slice(0, 16);
}
