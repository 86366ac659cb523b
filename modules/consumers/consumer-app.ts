import { type INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AnalyticsEventWriter, type ClickHouseConnection } from '../../projections/clickhouse-analytics/index.js';
import { ClickHouseAnalyticsConsumer } from './clickhouse-analytics.consumer.js';
import { natsCredentials } from '../relay/index.js';
import type { ConsumerSettings } from './consumer-settings.js';
import { JetStreamConsumerServer } from './jetstream-consumer-server.js';
import { RabbitMqConsumerServer } from './rabbitmq-consumer-server.js';
import { WebhookDelivery } from './webhook-delivery.js';
import type { WebhookSettings } from './webhook-settings.js';
import { webhooksConsumer } from './webhooks.consumer.js';

/** What a consumer writes to: ClickHouse for the analytics rows, the operator's URLs for webhooks. */
export type ConsumerTarget = { name: 'clickhouse-analytics'; clickhouse: ClickHouseConnection } | { name: 'webhooks'; webhooks: WebhookSettings };

/**
 * One consumer as a NestJS microservice: its controller's `@EventPattern` handlers behind the transport
 * strategy of the relay's broker. Resolves once it listens (the durable consumers or the queue exist).
 */
export async function startConsumer(settings: ConsumerSettings, target: ConsumerTarget): Promise<INestMicroservice> {
  const strategy = settings.transport === 'nats'
    ? new JetStreamConsumerServer(settings.servers, natsCredentials(settings.url), settings.group)
    : new RabbitMqConsumerServer(settings.url, settings.group);
  let module: new () => unknown;
  if (target.name === 'clickhouse-analytics') {
    const writer = new AnalyticsEventWriter(target.clickhouse);
    // The schema before the first message: a ClickHouse that is not there stops the start with its reason.
    await writer.prepare().catch((error: unknown) => {
      throw new Error(`ClickHouse (CLICKHOUSE_URL) cannot be prepared: ${(error as Error)?.message ?? String(error)}`, { cause: error });
    });
    @Module({ controllers: [ClickHouseAnalyticsConsumer], providers: [{ provide: AnalyticsEventWriter, useValue: writer }] })
    class ClickHouseAnalyticsConsumerModule {}
    module = ClickHouseAnalyticsConsumerModule;
  } else {
    @Module({ controllers: [webhooksConsumer(target.webhooks.events)], providers: [{ provide: WebhookDelivery, useValue: new WebhookDelivery(target.webhooks, strategy) }] })
    class WebhooksConsumerModule {}
    module = WebhooksConsumerModule;
  }
  const app = await NestFactory.createMicroservice(module, { strategy, logger: ['error', 'warn', 'log'], abortOnError: false });
  await app.listen();
  return app;
}
