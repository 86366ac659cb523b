import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';

/**
 * Service-backed suites use real servers named by DATABASE_URL, REDIS_URL and CLICKHOUSE_URL. Without
 * them a suite is skipped; under CI=true a missing service fails the run instead. Under `npm test`
 * (scripts/run-tests.mjs, which sets SWITCHYARD_TEST_SKIPS) the skip is recorded for the run's one notice
 * per service; a suite run by jest directly says so itself.
 */
export function requireService(name: 'DATABASE_URL' | 'REDIS_URL' | 'CLICKHOUSE_URL'): string | null {
  const value = process.env[name];
  if (value) return value;
  if (process.env.CI === 'true') throw new Error(`${name} is required under CI=true`);
  const skips = process.env.SWITCHYARD_TEST_SKIPS;
  if (skips) appendFileSync(skips, `${name}\t${suitePath()}\n`);
  else process.stderr.write(`[skip] ${name} is not set: skipping the suites that need it\n`);
  return null;
}

/** The running suite's file (jest's expect state holds it while the suite loads and runs). */
function suitePath(): string {
  const state = (globalThis as { expect?: { getState?: () => { testPath?: string } } }).expect?.getState?.();
  return state?.testPath ?? `worker ${process.env.JEST_WORKER_ID ?? '?'}`;
}

/**
 * A fresh PostgreSQL database for one suite, dropped afterwards: empty, or a copy of `template` (a database
 * no one is connected to; migrated-postgres-template.ts).
 */
export async function createScratchDatabase(baseUrl: string, template?: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `sy_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  } finally {
    await admin.end();
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: baseUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
