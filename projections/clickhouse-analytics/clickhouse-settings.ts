import { ConfigurationError } from '../../src/kernel/index.js';

export interface ClickHouseSettings {
  /** Scheme, host and port only. */
  url: string;
  /** The database named by the URL's path (default `switchyard`); created if missing. */
  database: string;
  username: string;
  password: string;
}

export const DEFAULT_CLICKHOUSE_DATABASE = 'switchyard';

/** `CLICKHOUSE_URL` = `http[s]://[user:password@]host:port[/database]`. */
export function clickHouseSettings(clickhouseUrl: string): ClickHouseSettings {
  let url: URL;
  try {
    url = new URL(clickhouseUrl);
  } catch {
    throw new ConfigurationError('CLICKHOUSE_URL must be a URL like http://127.0.0.1:8123/switchyard');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigurationError('CLICKHOUSE_URL must use http or https');
  const database = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, '')) || DEFAULT_CLICKHOUSE_DATABASE;
  // The name is spliced into DDL (ClickHouse 18.16 has no query parameters), so only plain identifiers.
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(database)) {
    throw new ConfigurationError(`CLICKHOUSE_URL names the database "${database}": use letters, digits and underscores only`);
  }
  return {
    url: `${url.protocol}//${url.host}`,
    database,
    username: decodeURIComponent(url.username) || 'default',
    password: decodeURIComponent(url.password),
  };
}
