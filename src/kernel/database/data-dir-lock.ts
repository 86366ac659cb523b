import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * PGlite keeps no cross-process lock on its files; two processes on one data dir would corrupt it.
 * A pid file taken with O_EXCL makes the second process fail with a clear message instead.
 */
export class DataDirLock {
  private constructor(readonly path: string) {}

  static acquire(dataDir: string): DataDirLock {
    const lock = DataDirLock.tryAcquire(dataDir);
    if (lock) return lock;
    const owner = DataDirLock.owner(dataDir);
    throw new Error(
      `The data directory ${dataDir} is in use by process ${owner ?? 'another process'}. Stop it first, or point ` +
        `DATABASE_URL at a PostgreSQL server to run several processes on one event store.`,
    );
  }

  /** The lock, or null while a live process holds it (a stale one, left by a process that died, is taken over). */
  static tryAcquire(dir: string): DataDirLock | null {
    const path = join(dir, 'switchyard.pid');
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx');
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return new DataDirLock(path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        if (DataDirLock.owner(dir) !== null) return null;
        rmSync(path, { force: true }); // stale: its owner died (for example kill -9)
      }
    }
    return null;
  }

  /** The live process holding the directory's lock, or null. */
  static owner(dir: string): number | null {
    let owner: number;
    try {
      owner = Number(readFileSync(join(dir, 'switchyard.pid'), 'utf8').trim());
    } catch {
      return null;
    }
    return owner && owner !== process.pid && isAlive(owner) ? owner : null;
  }

  release(): void {
    rmSync(this.path, { force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
