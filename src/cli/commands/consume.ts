import { Logger } from '@nestjs/common';
import { readConsumerSettings, readWebhookSettings, startConsumer } from '../../../modules/consumers/index.js';
import { ClickHouseConnection, clickHouseSettings } from '../../../projections/clickhouse-analytics/index.js';
import { ConfigurationError, readEnvironment } from '../../config/environment.js';
import { logLevels } from '../../gateway.js';
import { GatewayLogger } from '../../gateway-logger.js';

/**
 * `switchyard consume NAME`: a consumer of the relayed log (docs/events-out.md "Consumers"). Run as many as
 * the load needs: processes of one group (SWITCHYARD_CONSUME_GROUP) share the broker's messages.
 */
export async function consume(name: string): Promise<void> {
  const environment = readEnvironment();
  Logger.overrideLogger(new GatewayLogger(logLevels(environment.logLevel)));
  const logger = new Logger('Consumer');
  const settings = readConsumerSettings(name, process.env);
  let clickhouse: ClickHouseConnection | null = null;
  let app;
  let writing: string;
  if (settings.name === 'webhooks') {
    const webhooks = readWebhookSettings(process.env);
    app = await startConsumer(settings, { name: 'webhooks', webhooks });
    writing = `delivering ${webhooks.events.join(',')} to ${webhooks.urls.length} URL(s)`;
  } else {
    if (!environment.clickhouseUrl) throw new ConfigurationError('switchyard consume clickhouse-analytics needs CLICKHOUSE_URL: the ClickHouse it writes to');
    clickhouse = new ClickHouseConnection(clickHouseSettings(environment.clickhouseUrl));
    app = await startConsumer(settings, { name: 'clickhouse-analytics', clickhouse });
    writing = `writing to ClickHouse database ${clickhouse.database}`;
  }
  logger.log(`${name}: consuming ${settings.transport === 'nats' ? 'JetStream stream SWITCHYARD' : 'RabbitMQ exchange switchyard.events'} at ` +
    `${settings.servers.join(',')} as group ${settings.group}, ${writing}`);
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal}: closing`);
    app.close().then(() => clickhouse?.close()).then(() => process.exit(0), (error: Error) => {
      logger.error(`shutdown failed: ${error.message}`);
      process.exit(1);
    });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

