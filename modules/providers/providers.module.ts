import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { RoutingSnapshotProjection } from '../../projections/routing-snapshot/index.js';
import { MockProviderHost } from './mock/mock-provider-host.js';
import { ProviderAdapters } from './provider-adapters.js';
import { PROVIDER_SETTINGS, type ProviderSettings } from './provider-settings.js';
import { UpstreamPools } from './upstream-pools.js';

/** Provider adapters (one per wire format), their connection pools, and the in-process mock provider. */
@Module({
  providers: [
    MockProviderHost,
    ProviderAdapters,
    {
      provide: UpstreamPools,
      useFactory: (mock: MockProviderHost, routing: RoutingSnapshotProjection, settings: ProviderSettings) => {
        const pools = new UpstreamPools(mock, { connectTimeoutMs: settings.connectTimeoutMs, connections: 256 });
        routing.onSwap((snapshot) => pools.retain(snapshot));
        return pools;
      },
      inject: [MockProviderHost, RoutingSnapshotProjection, PROVIDER_SETTINGS],
    },
  ],
  exports: [MockProviderHost, ProviderAdapters, UpstreamPools],
})
export class ProvidersModule implements OnApplicationShutdown {
  constructor(
    private readonly pools: UpstreamPools,
    private readonly mock: MockProviderHost,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pools.close();
    await this.mock.close();
  }
}
