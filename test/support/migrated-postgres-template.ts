import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { applyMigrations, migrationsDigest } from './migrated-template.js';
import { createScratchDatabase } from './services.js';

/**
 * A scratch PostgreSQL database with this build's migrations already applied, for the harness's gateways
 * (gateway-harness.ts), which test something other than migrating: CI starts hundreds of them, each of
 * which ran every migration on an empty database first. The template is one database per server and set of
 * migrations, migrated once by the product's own `migrate` under another name and renamed into place, so
 * that two workers making it at once leave one whole template; `CREATE DATABASE … TEMPLATE` copies it.
 * Suites about migrating or a first start use createScratchDatabase (empty) and start their own servers.
 */
const templates = new Map<string, Promise<string>>();

export async function createMigratedScratchDatabase(baseUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  let template = templates.get(baseUrl);
  if (!template) {
    template = migratedTemplate(baseUrl);
    templates.set(baseUrl, template);
    template.catch(() => templates.delete(baseUrl));
  }
  return createScratchDatabase(baseUrl, await template);
}

async function migratedTemplate(baseUrl: string): Promise<string> {
  const name = `sy_template_${migrationsDigest()}`;
  if (await exists(baseUrl, name)) return name;
  const building = `${name}_${randomBytes(4).toString('hex')}`;
  await sql(baseUrl, `CREATE DATABASE ${building}`);
  try {
    const url = new URL(baseUrl);
    url.pathname = `/${building}`;
    await applyMigrations({ databaseUrl: url.toString(), dataDir: null });
    await sql(baseUrl, `ALTER DATABASE ${building} RENAME TO ${name}`);
  } catch (error) {
    await sql(baseUrl, `DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
    // Another worker renamed its template into place first: use that one.
    if ((error as { code?: string }).code === '42P04' && (await exists(baseUrl, name))) return name;
    throw error;
  }
  return name;
}

async function exists(baseUrl: string, name: string): Promise<boolean> {
  const rows = await sql(baseUrl, `SELECT 1 FROM pg_database WHERE datname = $1`, [name]);
  return rows.length > 0;
}

async function sql(baseUrl: string, text: string, params: unknown[] = []): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}
