import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigurationError } from '../kernel/configuration-error.js';

/**
 * "This embedded store was moved to PostgreSQL": a file in the data directory, written by `switchyard migrate`
 * once the copy verified. The embedded store is what every command and server opens when DATABASE_URL is not set,
 * so without the mark a command run in a shell that lacks DATABASE_URL would write into the store the installation
 * left — a key revoked there is still accepted by the gateway on PostgreSQL, while the command says it is revoked.
 * With it, every process that would open the store refuses and names where the log went. A file rather than a row
 * so that the way back is plain: delete it (docs/operations.md).
 */
export const MOVED_MARK_FILE = 'moved.json';

export interface MovedMark {
  /** The target as printed (no password). */
  to: string;
  movedAt: string;
  /** The log's last position when it was copied (`transaction:position`), or null for an empty log. */
  lastPosition: string | null;
}

export function writeMovedMark(dataDir: string, mark: MovedMark): void {
  const path = join(dataDir, MOVED_MARK_FILE);
  // Whole or not at all: a mark cut short by a crash would be a store that neither opens nor says why.
  writeFileSync(`${path}.tmp`, `${JSON.stringify(mark, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

export function readMovedMark(dataDir: string): MovedMark | null {
  let text: string;
  try {
    text = readFileSync(join(dataDir, MOVED_MARK_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const mark = JSON.parse(text) as Partial<MovedMark>;
    return { to: typeof mark.to === 'string' ? mark.to : 'another store', movedAt: typeof mark.movedAt === 'string' ? mark.movedAt : 'an unknown time', lastPosition: mark.lastPosition ?? null };
  } catch {
    // Edited by hand into something else: still a mark, still refused.
    return { to: 'another store', movedAt: 'an unknown time', lastPosition: null };
  }
}

/** Refuses to open an embedded store that `switchyard migrate` moved elsewhere (nothing is opened or changed). */
export function refuseMovedStore(dataDir: string): void {
  const mark = readMovedMark(dataDir);
  if (!mark) return;
  const file = join(resolve(dataDir), MOVED_MARK_FILE);
  throw new ConfigurationError(
    `The embedded store in ${resolve(dataDir)} was moved to ${mark.to} by switchyard migrate (${mark.movedAt}); the gateway's log is there now. ` +
      `Set DATABASE_URL to that database for this command (nothing was read or written here). ` +
      `To use the embedded store again anyway — it holds nothing written since the move — delete ${file}.`,
  );
}
