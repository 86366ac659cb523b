import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { Readable } from 'node:stream';
import type { ClickHouseSettings } from './clickhouse-settings.js';

/**
 * The one ClickHouse client of a process (DESIGN §9: no per-request clients). Everything goes through
 * statements that ClickHouse 18.16 understands: no query parameters (19.11+), values are quoted here;
 * rows are read as JSONEachRow with numbers and decimals selected as strings; inserts are TabSeparated,
 * whose decimal text ClickHouse parses exactly (18.16 rejects quoted decimals in JSONEachRow).
 */
export class ClickHouseConnection {
  readonly database: string;
  private readonly client: ClickHouseClient;
  private readonly server: ClickHouseClient;

  constructor(readonly settings: ClickHouseSettings) {
    this.database = settings.database;
    const common = {
      url: settings.url,
      username: settings.username,
      password: settings.password,
      request_timeout: 30_000,
      compression: { request: false, response: false },
      max_open_connections: 4,
      application: 'switchyard',
      // Failures surface as errors to the projection and the analytics API, which report them once.
      log: { level: ClickHouseLogLevel.OFF },
    };
    this.client = createClient({ database: settings.database, ...common });
    // Statements that must run before the database exists (CREATE DATABASE).
    this.server = createClient({ database: 'default', ...common });
  }

  /** `db.table`, for DDL and queries that must not depend on the session's database. */
  table(name: string): string {
    return `${this.database}.${name}`;
  }

  async ensureDatabase(): Promise<void> {
    await this.server.command({ query: `CREATE DATABASE IF NOT EXISTS ${this.database}` });
  }

  async command(query: string, queryId?: string): Promise<void> {
    await this.client.command({ query, ...(queryId ? { query_id: queryId } : {}) });
  }

  async rows<Row>(query: string): Promise<Row[]> {
    const result = await this.client.query({ query, format: 'JSONEachRow' });
    return (await result.json()) as Row[];
  }

  /** One INSERT of TabSeparated lines (already escaped), under a query id the caller can look for. */
  async insertTabSeparated(table: string, columns: readonly string[], lines: readonly string[], queryId: string): Promise<void> {
    await this.client.insert({
      table: this.table(table),
      columns: columns as [string, ...string[]],
      values: Readable.from([`${lines.join('\n')}\n`], { objectMode: false }),
      format: 'TabSeparated',
      query_id: queryId,
    });
  }

  async ping(): Promise<boolean> {
    const result = await this.client.ping();
    return result.success;
  }

  async close(): Promise<void> {
    await Promise.all([this.client.close(), this.server.close()]);
  }
}

/** A ClickHouse string literal: backslash and quote escaped (18.16 accepts both escapes). */
export function quoteString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
