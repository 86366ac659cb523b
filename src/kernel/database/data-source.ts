import { DataSource, type MixedList, type EntitySchema } from 'typeorm';
import { postgresMigrations } from '../../../migrations/postgres/index.js';
import type { Database } from './database.js';

type EntityList = MixedList<string | (new () => unknown) | EntitySchema>;

/**
 * TypeORM over the same database the event store uses: PostgreSQL by URL (a pool of its own, which the
 * durable projections write through), or the PGlite session through the adapter's pg-compatible pool.
 */
export async function openDataSource(database: Database, databaseUrl: string | null, entities: EntityList): Promise<DataSource> {
  const dataSource = new DataSource({
    type: 'postgres',
    ...(database.kind === 'postgres'
      ? {
          url: databaseUrl ?? undefined,
          poolSize: 5,
          connectTimeoutMS: 5_000,
          extra: { keepAlive: true },
          // An idle pooled client that loses its server is dropped and replaced; a checked-out one is
          // covered by TypeORM's query runner, which fails the running transaction (the projection
          // runner retries it on its next wake-up).
          poolErrorHandler: () => undefined,
        }
      : { driver: database.typeormDriver() }),
    entities,
    migrations: postgresMigrations,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    installExtensions: false,
    synchronize: false,
    logging: false,
  });
  await dataSource.initialize();
  return dataSource;
}

const MIGRATION_LOCK = 0x53594d47; // "SYMG"

/** Runs pending migrations; on PostgreSQL one node at a time (advisory lock), the others wait. */
export async function migrate(database: Database, dataSource: DataSource): Promise<string[]> {
  for (let waited = 0; ; waited += 250) {
    const lease = await database.tryAcquireLease(MIGRATION_LOCK);
    if (lease) {
      try {
        const applied = await dataSource.runMigrations({ transaction: 'each' });
        return applied.map((migration) => migration.name);
      } finally {
        await lease.release();
      }
    }
    if (waited > 60_000) throw new Error('Timed out waiting for another node to finish migrating the database');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
