import { ConfigurationError, type SettingsEnv, declareSettings, textSetting } from '../../src/kernel/index.js';

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

export const ANALYTICS_ENVIRONMENT = declareSettings('projections/clickhouse-analytics', {
  SWITCHYARD_ANALYTICS_FEED: {
    type: '`log` or `broker`',
    default: '`log`',
    meaning:
      'who writes the ClickHouse analytics rows (with CLICKHOUSE_URL): `log`, the in-process projection reading PostgreSQL; `broker`, `switchyard consume clickhouse-analytics` ' +
      'reading the relay (the gateway then writes none and only reads ClickHouse for the analytics API); see docs/events-out.md#consumers',
  },
});

/** Who writes the analytics rows: the in-process projection (`log`) or `switchyard consume clickhouse-analytics` (`broker`). */
export function analyticsFeed(env: SettingsEnv): 'log' | 'broker' {
  const value = textSetting(env, ANALYTICS_ENVIRONMENT.SWITCHYARD_ANALYTICS_FEED)?.trim() || 'log';
  if (value !== 'log' && value !== 'broker') throw new ConfigurationError(`SWITCHYARD_ANALYTICS_FEED must be log or broker, not "${value}"`);
  return value;
}
