import type { Database } from './database.js';
import { PgliteDatabase } from './pglite-database.js';
import { PostgresDatabase } from './postgres-database.js';

export interface DatabaseSettings {
  /** PostgreSQL connection string; null selects embedded PGlite. */
  databaseUrl: string | null;
  /** PGlite data directory; null keeps PGlite in memory (tests). */
  dataDir: string | null;
  poolSize?: number;
}

export async function openDatabase(settings: DatabaseSettings): Promise<Database> {
  if (settings.databaseUrl) return new PostgresDatabase(settings.databaseUrl, settings.poolSize);
  return PgliteDatabase.open(settings.dataDir);
}
