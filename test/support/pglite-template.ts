import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgliteThread } from '../../src/kernel/database/pglite-thread.js';

/**
 * A new embedded data directory without running initdb again. Creating one costs this machine 6–7 s
 * (about 150 s of every CI run, over some twenty suites); copying a database that was just created and
 * closed cleanly is PostgreSQL's cold copy, exactly what initdb leaves behind, and takes a fraction of a
 * second. The template is created once per machine and PGlite version, by `PgliteThread.start` itself,
 * so it is what the product creates; the suites that test creation (the quick start, the engine's thread)
 * still create their own. Migrations are not in it: every gateway and store applies them as on a first start.
 */
const PGLITE_VERSION = (JSON.parse(readFileSync(new URL('../../../node_modules/@electric-sql/pglite/package.json', import.meta.url), 'utf8')) as { version: string }).version;
const TEMPLATE = join(tmpdir(), `switchyard-test-pglite-template-${PGLITE_VERSION}`);

async function template(): Promise<string> {
  if (existsSync(join(TEMPLATE, 'PG_VERSION'))) return TEMPLATE;
  // Built beside it and renamed into place: two workers creating it at once leave one whole template.
  const building = mkdtempSync(`${TEMPLATE}.building-`);
  try {
    const engine = await PgliteThread.start(join(building, 'pgdata'));
    await engine.close();
    try {
      renameSync(join(building, 'pgdata'), TEMPLATE);
    } catch (error) {
      if (!existsSync(join(TEMPLATE, 'PG_VERSION'))) throw error;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return TEMPLATE;
}

/** Puts a new, empty database at `pgdata` (the engine's directory: `<SWITCHYARD_DATA_DIR>/pgdata`). */
export async function seedEmbeddedDatabase(pgdata: string): Promise<void> {
  if (existsSync(pgdata)) throw new Error(`${pgdata} exists already`);
  const source = await template();
  mkdirSync(join(pgdata, '..'), { recursive: true });
  cpSync(source, pgdata, { recursive: true });
}

/** `seedEmbeddedDatabase` for a gateway's data directory (`SWITCHYARD_DATA_DIR`): its engine lives in `pgdata` under it. */
export function seedEmbeddedDataDir(dataDir: string): Promise<void> {
  return seedEmbeddedDatabase(join(dataDir, 'pgdata'));
}

/** A temporary directory holding a new database at `<dir>/pgdata`; `remove` deletes it. */
export async function seededTemporaryDatabase(): Promise<{ dir: string; pgdata: string; remove: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-seeded-'));
  const pgdata = join(dir, 'pgdata');
  await seedEmbeddedDatabase(pgdata);
  return { dir, pgdata, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
