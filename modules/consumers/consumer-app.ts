import { type INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AnalyticsEventWriter, ClickHouseConnection } from '../../projections/clickhouse-analytics/index.js';
import { ClickHouseAnalyticsConsumer } from './clickhouse-analytics.consumer.js';
import { type ConsumerSettings, natsCredentials } from './consumer-settings.js';
import type { ConsumerServer } from './consumer-server.js';
import { JetStreamConsumerServer } from './jetstream-consumer-server.js';
import { RabbitMqConsumerServer } from './rabbitmq-consumer-server.js';

/**
 * One consumer as a NestJS microservice: its controller's `@EventPattern` handlers behind the transport
 * strategy of the relay's broker. Resolves once it listens (the durable consumers or the queue exist).
 */
export async function startConsumer(settings: ConsumerSettings, clickhouse: ClickHouseConnection): Promise<INestMicroservice> {
  const writer = new AnalyticsEventWriter(clickhouse);
  // The schema before the first message: a ClickHouse that is not there stops the start with its reason.
  await writer.prepare();
  @Module({ controllers: [ClickHouseAnalyticsConsumer], providers: [{ provide: AnalyticsEventWriter, useValue: writer }] })
  class ClickHouseAnalyticsConsumerModule {}
  const strategy: ConsumerServer = settings.transport === 'nats'
    ? new JetStreamConsumerServer(settings.servers, natsCredentials(settings.url), settings.group)
    : new RabbitMqConsumerServer(settings.url, settings.group);
  const app = await NestFactory.createMicroservice(ClickHouseAnalyticsConsumerModule, { strategy, logger: ['error', 'warn', 'log'], abortOnError: false });
  await app.listen();
  return app;
}
