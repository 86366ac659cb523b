import { Module } from '@nestjs/common';
import { GroupCommitter } from '../../src/kernel/event-store/group-committer.js';
import { RoutingSnapshotProjection } from '../../projections/routing-snapshot/routing-snapshot.projection.js';
import { ENVIRONMENT } from '../../src/platform.module.js';
import type { Environment } from '../../src/config/environment.js';
import { AccessModule } from '../access/access.module.js';
import { GatewayAuthenticator } from '../access/gateway-authenticator.js';
import { ProviderAdapters } from '../providers/provider-adapters.js';
import { ProvidersModule } from '../providers/providers.module.js';
import { UpstreamPools } from '../providers/upstream-pools.js';
import { ChatCompletionsController } from './http/chat-completions.controller.js';
import { ModelsController } from './http/models.controller.js';
import { ChatPipeline } from './pipeline/chat-pipeline.js';
import { LatencyTracker } from './routing/latency-tracker.js';
import { RoutePlanner } from './routing/route-planner.js';

/** The data plane: client formats, pipeline, routing and streaming. */
@Module({
  imports: [AccessModule, ProvidersModule],
  controllers: [ChatCompletionsController, ModelsController],
  providers: [
    { provide: LatencyTracker, useFactory: () => new LatencyTracker() },
    { provide: RoutePlanner, useFactory: (latency: LatencyTracker) => new RoutePlanner(latency), inject: [LatencyTracker] },
    {
      provide: ChatPipeline,
      useFactory: (
        auth: GatewayAuthenticator, routing: RoutingSnapshotProjection, planner: RoutePlanner, adapters: ProviderAdapters,
        pools: UpstreamPools, committer: GroupCommitter, latency: LatencyTracker, environment: Environment,
      ) =>
        new ChatPipeline(auth, routing, planner, adapters, pools, committer, latency, {
          durability: environment.durability,
          nodeId: environment.nodeId,
          requestTimeoutMs: 120_000,
          ttftTimeoutMs: 15_000,
          idleTimeoutMs: 30_000,
          maxAttempts: 3,
        }),
      inject: [GatewayAuthenticator, RoutingSnapshotProjection, RoutePlanner, ProviderAdapters, UpstreamPools, GroupCommitter, LatencyTracker, ENVIRONMENT],
    },
  ],
})
export class InferenceModule {}
