import pg from 'pg';
import type { Environment } from '../../src/config/environment.js';

/** Runs statements on one database, in order, in one session (so SET session_replication_role applies). */
export async function sql(url: string, ...statements: Array<string | [string, unknown[]]>): Promise<Array<Record<string, any>[]>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const results: Array<Record<string, any>[]> = [];
    for (const statement of statements) {
      const [text, params] = typeof statement === 'string' ? [statement, []] : statement;
      results.push((await client.query(text, params)).rows);
    }
    return results;
  } finally {
    await client.end();
  }
}

/** A copy of a database (CREATE DATABASE … TEMPLATE), dropped by the returned function. */
export async function cloneDatabase(baseUrl: string, templateUrl: string, name: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const template = new URL(templateUrl).pathname.slice(1);
  await sql(baseUrl, `CREATE DATABASE ${name} TEMPLATE ${template}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: async () => void (await sql(baseUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)) };
}

/** An environment for opening the platform in the test process against one database. */
export function environmentFor(databaseUrl: string | null, overrides: Partial<Environment> = {}): Environment {
  return {
    port: 0, host: '127.0.0.1', configPath: null, dataDir: ':memory:', databaseUrl, redisUrl: null, clickhouseUrl: null,
    adminToken: null, durability: 'default', pollIntervalMs: 200, nodeId: 'audit-test', logLevel: 'error', ...overrides,
  };
}
