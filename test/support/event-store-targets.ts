import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import type { Database } from '../../src/kernel/database/database.js';
import { migrate, openDataSource } from '../../src/kernel/database/data-source.js';
import { openDatabase } from '../../src/kernel/database/open-database.js';
import { SqlEventStore } from '../../src/kernel/event-store/sql-event-store.js';
import { createScratchDatabase, requireService } from './services.js';
import { seedEmbeddedDataDir } from './pglite-template.js';

export interface StoreFixture {
  database: Database;
  dataSource: DataSource;
  store: SqlEventStore;
  url: string | null;
  close: () => Promise<void>;
}

export interface StoreTarget {
  name: string;
  open: () => Promise<StoreFixture>;
}

/** PGlite always; real PostgreSQL when DATABASE_URL is set (required under CI=true). */
export function storeTargets(): StoreTarget[] {
  const targets: StoreTarget[] = [{
    name: 'pglite',
    open: async () => {
      // A data directory of its own, copied from the template rather than created (initdb) again.
      const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-store-'));
      await seedEmbeddedDataDir(dataDir);
      return openFixture(null, async () => rmSync(dataDir, { recursive: true, force: true }), dataDir);
    },
  }];
  const baseUrl = requireService('DATABASE_URL');
  if (baseUrl) {
    targets.push({
      name: 'postgres',
      open: async () => {
        const scratch = await createScratchDatabase(baseUrl);
        return openFixture(scratch.url, scratch.drop);
      },
    });
  }
  return targets;
}

/** A migrated store on PostgreSQL (`url`) or PGlite (in `dataDir`, or in memory when null); `close` keeps the data. */
export function openStore(url: string | null, dataDir: string | null = null): Promise<StoreFixture> {
  return openFixture(url, async () => undefined, dataDir);
}

async function openFixture(url: string | null, drop: () => Promise<void>, dataDir: string | null = null): Promise<StoreFixture> {
  const database = await openDatabase({ databaseUrl: url, dataDir });
  const dataSource = await openDataSource(database, url, []);
  await migrate(database, dataSource);
  return {
    database,
    dataSource,
    store: new SqlEventStore(database),
    url,
    close: async () => {
      await dataSource.destroy();
      await database.close();
      await drop();
    },
  };
}

/**
 * A describe block over the PostgreSQL target only (`%s` in the title is its name). Without DATABASE_URL
 * there is no such target: the block is reported as skipped, instead of `describe.each` failing the suite
 * on an empty table (the suite must still pass on a fresh machine).
 */
export function describeOnPostgres(title: string, body: (target: StoreTarget) => void): void {
  const targets = storeTargets().filter((target) => target.name === 'postgres');
  if (targets.length === 0) {
    describe.skip(title.replace('%s', 'postgres'), () => test('needs DATABASE_URL', () => undefined));
    return;
  }
  describe.each(targets.map((target) => [target.name, target] as const))(title, (_name, target) => body(target));
}
