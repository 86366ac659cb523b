import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Environment } from '../../src/config/environment.js';
import { ENVIRONMENT, PLATFORM } from '../../src/platform.module.js';
import type { Platform } from '../../src/platform.js';
import { ClusterMetrics } from './cluster-metrics.js';
import { DocsController } from './docs.controller.js';
import { MetricsController } from './metrics.controller.js';
import { Observability } from './observability.js';
import { readObservabilitySettings } from './observability-settings.js';
import { watchPlatform } from './platform-metrics.js';
import { Readiness } from './readiness.js';

/**
 * Metrics, traces and request logs. Global, so the data plane and the kernel's watchers share one
 * Observability per gateway; other modules register their own gauges on `observability.metrics`.
 */
@Global()
@Module({
  controllers: [MetricsController, DocsController],
  providers: [
    ClusterMetrics,
    {
      provide: Observability,
      useFactory: (environment: Environment, platform: Platform, clusterMetrics: ClusterMetrics) => {
        const { requestLogDestination, ...overrides } = environment.observability ?? {};
        const observability = new Observability({ ...readObservabilitySettings(process.env), ...overrides }, environment.logLevel, requestLogDestination);
        clusterMetrics.adopt(observability.metrics.registry);
        observability.onClose(watchPlatform(observability, platform));
        return observability;
      },
      inject: [ENVIRONMENT, PLATFORM, ClusterMetrics],
    },
    {
      provide: Readiness,
      useFactory: (observability: Observability, platform: Platform) => new Readiness(platform, observability.settings.readyMaxLagEvents),
      inject: [Observability, PLATFORM],
    },
  ],
  exports: [Observability, Readiness],
})
export class ObservabilityModule implements OnApplicationShutdown {
  constructor(
    @Inject(Observability) private readonly observability: Observability,
    @Inject(Readiness) private readonly readiness: Readiness,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.readiness.close();
    await this.observability.close();
  }
}
