import { ConfigurationError, type SettingsEnv, declareSettings, textSetting } from '../../src/kernel/index.js';

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
