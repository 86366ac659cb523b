import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/kernel/database/open-database.js';
import { migrate, openDataSource } from '../../src/kernel/database/data-source.js';
import { ENTITIES } from '../../src/platform.js';
import { seedEmbeddedDataDir } from './pglite-template.js';

/**
 * A new embedded database with this build's migrations already applied, for the many suites that start a
 * gateway to test something else. Applying the migrations costs a gateway's start about 1.4 s of CPU on
 * this machine (start on a migrated copy: 1.6 s; on the bare template: 3.0 s), paid by every embedded test
 * gateway of a run. The template is made once per machine, PGlite version and set of migrations, by the
 * product's own `migrate` on a copy of the bare template; the suites about a first start (the quick start,
 * startup output, the store suites) keep starting from the bare template or from initdb.
 */
/** Applies this build's migrations with the product's own `migrate` to a database (PostgreSQL or an embedded data dir), then closes it. */
export async function applyMigrations(target: { databaseUrl: string | null; dataDir: string | null }): Promise<void> {
  const database = await openDatabase(target);
  try {
    const dataSource = await openDataSource(database, target.databaseUrl, ENTITIES);
    try {
      await migrate(database, dataSource);
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await database.close();
  }
}

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/postgres/', import.meta.url));

/** This build's migrations, as a short digest: templates are made once per set of migrations. */
export function migrationsDigest(): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(MIGRATIONS_DIR).filter((file) => file.endsWith('.js')).sort()) {
    hash.update(name).update(readFileSync(join(MIGRATIONS_DIR, name)));
  }
  return hash.digest('hex').slice(0, 16);
}

let template: Promise<string> | null = null;

async function migratedTemplate(): Promise<string> {
  const path = join(tmpdir(), `switchyard-test-pglite-migrated-${migrationsDigest()}`);
  if (existsSync(join(path, 'pgdata', 'PG_VERSION'))) return path;
  // Built beside it and renamed into place: two workers building it at once leave one whole template.
  const building = mkdtempSync(`${path}.building-`);
  try {
    const dataDir = join(building, 'data');
    await seedEmbeddedDataDir(dataDir);
    await applyMigrations({ databaseUrl: null, dataDir });
    try {
      renameSync(dataDir, path);
    } catch (error) {
      if (!existsSync(join(path, 'pgdata', 'PG_VERSION'))) throw error;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return path;
}

/** Puts a new database with every migration applied in a gateway's data directory (`SWITCHYARD_DATA_DIR`). */
export async function seedMigratedDataDir(dataDir: string): Promise<void> {
  if (existsSync(join(dataDir, 'pgdata'))) throw new Error(`${dataDir}/pgdata exists already`);
  template ??= migratedTemplate();
  const source = await template.catch((error: unknown) => {
    template = null;
    throw error;
  });
  mkdirSync(dataDir, { recursive: true });
  cpSync(join(source, 'pgdata'), join(dataDir, 'pgdata'), { recursive: true });
}
