import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import type { AttemptFinished, Recorded, RequestServedFromCache } from '../../events/index.js';
import { AnalyticsEventWriter } from '../../projections/clickhouse-analytics/index.js';

/**
 * `switchyard consume clickhouse-analytics`: the ClickHouse analytics rows written from the broker instead
 * of by the in-process projection reading PostgreSQL (run the gateway with SWITCHYARD_ANALYTICS_FEED=broker).
 * Each handler resolves once ClickHouse holds the row; the transport acknowledges the message only then.
 */
@Controller()
export class ClickHouseAnalyticsConsumer {
  constructor(@Inject(AnalyticsEventWriter) private readonly writer: AnalyticsEventWriter) {}

  @EventPattern('AttemptFinished')
  async attemptFinished(@Payload() event: Recorded<AttemptFinished>): Promise<void> {
    await this.writer.write(event);
  }

  @EventPattern('RequestServedFromCache')
  async servedFromCache(@Payload() event: Recorded<RequestServedFromCache>): Promise<void> {
    await this.writer.write(event);
  }
}
