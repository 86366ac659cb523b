import { Inject, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { GroupCommitter, SqlEventStore } from '../../src/kernel/index.js';
import { RoutingSnapshotProjection } from '../../projections/routing-snapshot/index.js';
import { GatewayAuthenticator } from '../access/index.js';
import { ProviderAdapters, ProvidersModule, UpstreamPools } from '../providers/index.js';
import { AdmissionControl, BudgetGuard, DeploymentConcurrency, LimitsModule, LimitsRedis, RateLimiter, SharedConcurrency } from '../limits/index.js';
import { CACHE_SETTINGS, type CacheSettings, CacheModule, EXACT_CACHE, type ExactCache, IDEMPOTENCY_STORE, type IdempotencyStore } from '../cache/index.js';
import { ExactCacheLookup } from './pipeline/exact-cache-lookup.js';
import { IdempotentReplay } from './pipeline/idempotent-replay.js';
import { Observability } from '../observability/index.js';
import { CONTENT_GUARD_RESOURCES, ContentSafetyModule, type GuardResources } from '../content-safety/index.js';
import { registerInferenceGauges } from './inference-gauges.js';
import { remoteCheckMetrics } from './pipeline/remote-check-metrics.js';
import { ChatCompletionsController } from './http/chat-completions.controller.js';
import { CountTokensController } from './http/count-tokens.controller.js';
import { EmbeddingsController } from './http/embeddings.controller.js';
import { MessagesController } from './http/messages.controller.js';
import { ModelsController } from './http/models.controller.js';
import { ResponsesController } from './http/responses.controller.js';
import { StoredResponsesController } from './http/stored-responses.controller.js';
import { INFERENCE_SETTINGS, type InferenceSettings } from './inference-settings.js';
import { ChatPipeline, type StoredAnswerParts } from './pipeline/chat-pipeline.js';
import { EmbeddingsPipeline } from './pipeline/embeddings-pipeline.js';
import { TokenCountPipeline } from './pipeline/token-count-pipeline.js';
import type { InferenceServices, PipelineSettings } from './pipeline/inference-services.js';
import { DeploymentGate } from './resilience/deployment-gate.js';
import { BreakerJournal } from './resilience/breaker-journal.js';
import { BreakerSignals } from './resilience/breaker-signals.js';
import { DeploymentHealth } from './resilience/deployment-health.js';
import { concurrencyLeaseMs } from './resilience/resilience-settings.js';
import { LatencyTracker } from './routing/latency-tracker.js';
import { RouteHealth } from './routing/route-health.js';
import { RoutePlanner } from './routing/route-planner.js';

/** Cross-node breaker signals (Redis), or nothing to close when REDIS_URL is unset. */
const BREAKER_SIGNALS = Symbol('BREAKER_SIGNALS');
const INFERENCE_SERVICES = Symbol('INFERENCE_SERVICES');
const PIPELINE_SETTINGS = Symbol('PIPELINE_SETTINGS');
const STORED_ANSWER_PARTS = Symbol('STORED_ANSWER_PARTS');
const INFERENCE_GAUGES = Symbol('INFERENCE_GAUGES');
type Closeable = { close(): Promise<void> };

/** The data plane: client formats, pipeline, routing and streaming. */
@Module({
  // GatewayAuthenticator comes from AccessModule, which is global.
  imports: [ProvidersModule, LimitsModule, CacheModule, ContentSafetyModule],
  controllers: [ChatCompletionsController, MessagesController, CountTokensController, ResponsesController, StoredResponsesController, ModelsController, EmbeddingsController],
  providers: [
    { provide: LatencyTracker, useFactory: () => new LatencyTracker() },
    {
      provide: DeploymentHealth,
      useFactory: (settings: InferenceSettings, store: SqlEventStore) => {
        const health = new DeploymentHealth(settings.resilience.breaker);
        const journal = new BreakerJournal(store, settings.nodeId);
        health.onTransition((deploymentId, transition) => journal.record(deploymentId, transition));
        return health;
      },
      inject: [INFERENCE_SETTINGS, SqlEventStore],
    },
    {
      provide: BREAKER_SIGNALS,
      useFactory: async (settings: InferenceSettings, health: DeploymentHealth): Promise<Closeable> => {
        if (!settings.redisUrl) return { close: async () => undefined };
        const signals = new BreakerSignals(settings.redisUrl, settings.nodeId, health, settings.resilience.breakerSyncIntervalMs, settings.redisNamespace);
        // Breakers keep working per node without Redis; sharing them must not stop the gateway from starting.
        await signals.start().catch((error: Error) => new Logger('InferenceModule').warn(`breaker signals unavailable: ${error.message}`));
        return signals;
      },
      inject: [INFERENCE_SETTINGS, DeploymentHealth],
    },
    {
      provide: RoutePlanner,
      useFactory: (latency: LatencyTracker, health: DeploymentHealth, load: DeploymentConcurrency) => new RoutePlanner(latency, new RouteHealth(health, load)),
      inject: [LatencyTracker, DeploymentHealth, DeploymentConcurrency],
    },
    {
      provide: DeploymentGate,
      useFactory: (health: DeploymentHealth, load: DeploymentConcurrency, settings: InferenceSettings) =>
        new DeploymentGate(health, load, concurrencyLeaseMs(settings.resilience.deadlines)),
      inject: [DeploymentHealth, DeploymentConcurrency, INFERENCE_SETTINGS],
    },
    {
      provide: INFERENCE_SERVICES,
      useFactory: (
        auth: GatewayAuthenticator, routing: RoutingSnapshotProjection, planner: RoutePlanner, adapters: ProviderAdapters,
        pools: UpstreamPools, committer: GroupCommitter, latency: LatencyTracker, gate: DeploymentGate, admission: AdmissionControl,
        rateLimits: RateLimiter, budgets: BudgetGuard, concurrency: SharedConcurrency, resources: GuardResources, observability: Observability,
      ): InferenceServices => {
        // Remote content checks report to the gateway's metrics (content safety cannot import observability: it is below it).
        const content: GuardResources = { keys: resources.keys, sessionVault: resources.sessionVault, remote: { observer: remoteCheckMetrics(observability), resolve: resources.remote?.resolve } };
        return { auth, routing, planner, adapters, pools, committer, latency, gate, admission, rateLimits, budgets, concurrency, content };
      },
      inject: [
        GatewayAuthenticator, RoutingSnapshotProjection, RoutePlanner, ProviderAdapters, UpstreamPools, GroupCommitter, LatencyTracker, DeploymentGate,
        AdmissionControl, RateLimiter, BudgetGuard, SharedConcurrency, CONTENT_GUARD_RESOURCES, Observability,
      ],
    },
    {
      provide: INFERENCE_GAUGES,
      useFactory: (observability: Observability, health: DeploymentHealth, admission: AdmissionControl, limits: LimitsRedis) => {
        registerInferenceGauges(observability, health, admission, limits);
        return true;
      },
      inject: [Observability, DeploymentHealth, AdmissionControl, LimitsRedis],
    },
    {
      provide: PIPELINE_SETTINGS,
      useFactory: (settings: InferenceSettings): PipelineSettings => ({
        durability: settings.durability, nodeId: settings.nodeId, resilience: settings.resilience, ...(settings.documents ? { documents: settings.documents } : {}),
      }),
      inject: [INFERENCE_SETTINGS],
    },
    {
      provide: STORED_ANSWER_PARTS,
      useFactory: (settings: CacheSettings, cache: ExactCache, store: IdempotencyStore, pipeline: PipelineSettings): StoredAnswerParts => ({
        idempotency: new IdempotentReplay(store, { retentionMs: settings.idempotencyRetentionMs, waitLimitMs: pipeline.resilience.deadlines.requestTimeoutMs }),
        cache: new ExactCacheLookup(cache, { enabled: settings.exactCacheEnabled, ttlMs: settings.exactCacheTtlMs }),
        maxEntryBytes: settings.maxEntryBytes,
      }),
      inject: [CACHE_SETTINGS, EXACT_CACHE, IDEMPOTENCY_STORE, PIPELINE_SETTINGS],
    },
    {
      provide: ChatPipeline,
      useFactory: (services: InferenceServices, settings: PipelineSettings, stored: StoredAnswerParts) => new ChatPipeline(services, settings, stored),
      inject: [INFERENCE_SERVICES, PIPELINE_SETTINGS, STORED_ANSWER_PARTS],
    },
    {
      provide: TokenCountPipeline,
      useFactory: (services: InferenceServices, settings: PipelineSettings) => new TokenCountPipeline(services, settings),
      inject: [INFERENCE_SERVICES, PIPELINE_SETTINGS],
    },
    {
      provide: EmbeddingsPipeline,
      useFactory: (services: InferenceServices, settings: PipelineSettings) => new EmbeddingsPipeline(services, settings),
      inject: [INFERENCE_SERVICES, PIPELINE_SETTINGS],
    },
  ],
  // The breakers, for the overview's read of their states.
  exports: [DeploymentHealth],
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
