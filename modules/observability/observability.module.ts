import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ClickHouseConnection } from '../../projections/clickhouse-analytics/index.js';
import { DATABASE, type Database, GroupCommitter, ProjectionRunner } from '../../src/kernel/index.js';
import { AdminModule } from '../admin/index.js';
import { LimitsModule, LimitsRedis } from '../limits/index.js';
import { RelayProjection } from '../relay/index.js';
import { ClusterMetrics } from './cluster-metrics.js';
import { DocsController } from './docs.controller.js';
import { HealthController } from './health.controller.js';
import { watchKernel } from './kernel-metrics.js';
import { MetricsController } from './metrics.controller.js';
import { Observability } from './observability.js';
import { OBSERVABILITY_SETTINGS, type ObservabilityContext } from './observability-settings.js';
import { ProjectionsController } from './projections.controller.js';
import { Readiness } from './readiness.js';
import { watchRelay } from './relay-metrics.js';
import { StatusController } from './status.controller.js';

/**
 * Metrics, traces, request logs, health and readiness, the node's status, the projections' report (and
 * their remedies: rebuild aside, resume) and the API document. Global, so the data plane and the kernel's
 * watchers share one Observability per gateway; other modules register their own gauges on
 * `observability.metrics`.
 */
@Global()
@Module({
  // Readiness reports Redis as the limits' probe sees it (one LimitsRedis per gateway: Nest shares the module's instance).
  // The admin module guards status and the projections' routes.
  imports: [LimitsModule, AdminModule],
  controllers: [MetricsController, DocsController, HealthController, StatusController, ProjectionsController],
  providers: [
    ClusterMetrics,
    {
      provide: Observability,
      useFactory: (context: ObservabilityContext, committer: GroupCommitter, runner: ProjectionRunner, clusterMetrics: ClusterMetrics, relay: RelayProjection | null) => {
        const observability = new Observability(context.settings, context.logLevel, context.requestLogDestination);
        clusterMetrics.adopt(observability.metrics.registry);
        observability.onClose(watchKernel(observability, committer, runner));
        // Only with SWITCHYARD_RELAY_URL: without a relay there are no relay series at all.
        if (relay) watchRelay(observability, runner, relay);
        return observability;
      },
      inject: [OBSERVABILITY_SETTINGS, GroupCommitter, ProjectionRunner, ClusterMetrics, { token: RelayProjection, optional: true }],
    },
    {
      provide: Readiness,
      useFactory: (context: ObservabilityContext, database: Database, runner: ProjectionRunner, redis: LimitsRedis, clickhouse: ClickHouseConnection | null) =>
        new Readiness(database, runner, clickhouse ?? null, redis, context.settings.readyMaxLagEvents),
      inject: [OBSERVABILITY_SETTINGS, DATABASE, ProjectionRunner, LimitsRedis, { token: ClickHouseConnection, optional: true }],
    },
  ],
  exports: [Observability, Readiness],
})
export class ObservabilityModule implements OnApplicationShutdown {
  constructor(@Inject(Observability) private readonly observability: Observability) {}

  async onApplicationShutdown(): Promise<void> {
    await this.observability.close();
  }
}
