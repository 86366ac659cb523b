/** ClickHouse analytics' public surface: attempts and cache hits copied to ClickHouse for spend reports. */
export { ANALYTICS_FAULTS_ENVIRONMENT, analyticsFaults } from './analytics-faults.js';
export { AnalyticsEventWriter, AnalyticsInsertInProgress, CONSUMER_INSERT_PREFIX } from './analytics-event-writer.js';
export { dateTime } from './attempt-row.js';
export { ClickHouseAnalyticsProjection } from './clickhouse-analytics.projection.js';
export { ClickHouseConnection, quoteString } from './clickhouse-connection.js';
export { ANALYTICS_ENVIRONMENT, analyticsFeed } from './analytics-feed.js';
export { clickHouseSettings } from './clickhouse-settings.js';
