import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * PGlite keeps no cross-process lock on its files; two processes on one data dir would corrupt it.
 * A pid file taken with O_EXCL makes the second process fail with a clear message instead.
 */
export class DataDirLock {
  private constructor(private readonly path: string) {}

  static acquire(dataDir: string): DataDirLock {
    const path = join(dataDir, 'switchyard.pid');
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx');
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return new DataDirLock(path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const owner = Number(readFileSync(path, 'utf8').trim());
        if (owner && owner !== process.pid && isAlive(owner)) {
          throw new Error(
            `The data directory ${dataDir} is in use by process ${owner}. Stop it first, or point ` +
              `DATABASE_URL at a PostgreSQL server to run several processes on one event store.`,
          );
        }
        rmSync(path, { force: true }); // stale: its owner died (for example kill -9)
      }
    }
    throw new Error(`Could not lock the data directory ${dataDir}`);
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
