import { openEngine, serializeError } from './pglite-engine.js';

/**
 * Creates the embedded database in the data directory given as the argument, then exits: run as a process
 * of its own by `PgliteThread.start` for a data directory that holds no database yet. Creating one (initdb)
 * grows the engine's memory to about 800 MB; in the serving process much of that stayed resident after the
 * creating engine was gone (a thread of its own still left 110 MB), while a process returns all of it.
 * A failure is written to stdout as PostgreSQL's report, as data.
 */
const dataDir = process.argv[2];
try {
  if (!dataDir) throw new Error('usage: pglite-create DATA_DIR');
  const pg = await openEngine(dataDir);
  await pg.close();
} catch (error) {
  process.stdout.write(JSON.stringify(serializeError(error)));
  process.exitCode = 1;
}
