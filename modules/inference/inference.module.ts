import { Inject, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { GroupCommitter } from '../../src/kernel/event-store/group-committer.js';
import { SqlEventStore } from '../../src/kernel/event-store/sql-event-store.js';
import { RoutingSnapshotProjection } from '../../projections/routing-snapshot/routing-snapshot.projection.js';
import { ENVIRONMENT } from '../../src/platform.module.js';
import type { Environment } from '../../src/config/environment.js';
import { AccessModule } from '../access/access.module.js';
import { GatewayAuthenticator } from '../access/gateway-authenticator.js';
import { ProviderAdapters } from '../providers/provider-adapters.js';
import { ProvidersModule } from '../providers/providers.module.js';
import { UpstreamPools } from '../providers/upstream-pools.js';
import { AdmissionControl } from '../limits/admission-control.js';
import { DeploymentConcurrency } from '../limits/deployment-concurrency.js';
import { LimitsModule } from '../limits/limits.module.js';
import { Observability } from '../observability/observability.js';
import { registerInferenceGauges } from './inference-gauges.js';
import { ChatCompletionsController } from './http/chat-completions.controller.js';
import { EmbeddingsController } from './http/embeddings.controller.js';
import { MessagesController } from './http/messages.controller.js';
import { ModelsController } from './http/models.controller.js';
import { ChatPipeline } from './pipeline/chat-pipeline.js';
import { EmbeddingsPipeline } from './pipeline/embeddings-pipeline.js';
import type { InferenceServices, PipelineSettings } from './pipeline/inference-services.js';
import { DeploymentGate } from './resilience/deployment-gate.js';
import { BreakerJournal } from './resilience/breaker-journal.js';
import { BreakerSignals } from './resilience/breaker-signals.js';
import { DeploymentHealth } from './resilience/deployment-health.js';
import { resolveResilience } from './resilience/resilience-settings.js';
import { LatencyTracker } from './routing/latency-tracker.js';
import { RouteHealth } from './routing/route-health.js';
import { RoutePlanner } from './routing/route-planner.js';

/** Cross-node breaker signals (Redis), or nothing to close when REDIS_URL is unset. */
const BREAKER_SIGNALS = Symbol('BREAKER_SIGNALS');
const INFERENCE_SERVICES = Symbol('INFERENCE_SERVICES');
const PIPELINE_SETTINGS = Symbol('PIPELINE_SETTINGS');
const INFERENCE_GAUGES = Symbol('INFERENCE_GAUGES');
type Closeable = { close(): Promise<void> };

/** The data plane: client formats, pipeline, routing and streaming. */
@Module({
  imports: [AccessModule, ProvidersModule, LimitsModule],
  controllers: [ChatCompletionsController, MessagesController, ModelsController, EmbeddingsController],
  providers: [
    { provide: LatencyTracker, useFactory: () => new LatencyTracker() },
    {
      provide: DeploymentHealth,
      useFactory: (environment: Environment, store: SqlEventStore) => {
        const health = new DeploymentHealth(resolveResilience(environment.resilience).breaker);
        const journal = new BreakerJournal(store, environment.nodeId);
        health.onTransition((deploymentId, transition) => journal.record(deploymentId, transition));
        return health;
      },
      inject: [ENVIRONMENT, SqlEventStore],
    },
    {
      provide: BREAKER_SIGNALS,
      useFactory: async (environment: Environment, health: DeploymentHealth): Promise<Closeable> => {
        if (!environment.redisUrl) return { close: async () => undefined };
        const signals = new BreakerSignals(environment.redisUrl, environment.nodeId, health, resolveResilience(environment.resilience).breakerSyncIntervalMs);
        // Breakers keep working per node without Redis; sharing them must not stop the gateway from starting.
        await signals.start().catch((error: Error) => new Logger('InferenceModule').warn(`breaker signals unavailable: ${error.message}`));
        return signals;
      },
      inject: [ENVIRONMENT, DeploymentHealth],
    },
    {
      provide: RoutePlanner,
      useFactory: (latency: LatencyTracker, health: DeploymentHealth, load: DeploymentConcurrency) => new RoutePlanner(latency, new RouteHealth(health, load)),
      inject: [LatencyTracker, DeploymentHealth, DeploymentConcurrency],
    },
    {
      provide: DeploymentGate,
      useFactory: (health: DeploymentHealth, load: DeploymentConcurrency) => new DeploymentGate(health, load),
      inject: [DeploymentHealth, DeploymentConcurrency],
    },
    {
      provide: INFERENCE_SERVICES,
      useFactory: (
        auth: GatewayAuthenticator, routing: RoutingSnapshotProjection, planner: RoutePlanner, adapters: ProviderAdapters,
        pools: UpstreamPools, committer: GroupCommitter, latency: LatencyTracker, gate: DeploymentGate, admission: AdmissionControl,
      ): InferenceServices => ({ auth, routing, planner, adapters, pools, committer, latency, gate, admission }),
      inject: [GatewayAuthenticator, RoutingSnapshotProjection, RoutePlanner, ProviderAdapters, UpstreamPools, GroupCommitter, LatencyTracker, DeploymentGate, AdmissionControl],
    },
    {
      provide: INFERENCE_GAUGES,
      useFactory: (observability: Observability, health: DeploymentHealth, admission: AdmissionControl) => {
        registerInferenceGauges(observability, health, admission);
        return true;
      },
      inject: [Observability, DeploymentHealth, AdmissionControl],
    },
    {
      provide: PIPELINE_SETTINGS,
      useFactory: (environment: Environment): PipelineSettings => ({
        durability: environment.durability, nodeId: environment.nodeId, resilience: resolveResilience(environment.resilience),
      }),
      inject: [ENVIRONMENT],
    },
    {
      provide: ChatPipeline,
      useFactory: (services: InferenceServices, settings: PipelineSettings) => new ChatPipeline(services, settings),
      inject: [INFERENCE_SERVICES, PIPELINE_SETTINGS],
    },
    {
      provide: EmbeddingsPipeline,
      useFactory: (services: InferenceServices, settings: PipelineSettings) => new EmbeddingsPipeline(services, settings),
      inject: [INFERENCE_SERVICES, PIPELINE_SETTINGS],
    },
  ],
})
export class InferenceModule implements OnApplicationShutdown {
  constructor(
    @Inject(BREAKER_SIGNALS) private readonly breakerSignals: Closeable,
    // Registered once per gateway: nothing injects the gauges, so the module asks for them.
    @Inject(INFERENCE_GAUGES) _gauges: unknown,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.breakerSignals.close();
  }
}
