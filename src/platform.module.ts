import { type DynamicModule, Global, Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { ADMIN_SETTINGS, type AdminSettings } from '../modules/admin/admin-settings.js';
import { AUDIT_TRAIL_SETTINGS, type AuditTrailSettings } from '../modules/audit/audit-trail-settings.js';
import { INFERENCE_SETTINGS, type InferenceSettings } from '../modules/inference/inference-settings.js';
import { resolveResilience } from '../modules/inference/resilience/resilience-settings.js';
import { resolveDocumentLimits } from '../modules/inference/pipeline/document-settings.js';
import { ADMISSION_SETTINGS, resolveAdmission } from '../modules/limits/admission-settings.js';
import { CACHE_SETTINGS, resolveCacheSettings } from '../modules/cache/cache-settings.js';
import { CONSOLE_SETTINGS, resolveConsoleSettings } from '../modules/console/console-settings.js';
import { CONTENT_SAFETY_SETTINGS, resolveContentSafetySettings } from '../modules/content-safety/content-safety-settings.js';
import { LIMITS_SETTINGS, type LimitsSettings } from '../modules/limits/limits-settings.js';
import { OBSERVABILITY_SETTINGS, type ObservabilityContext, resolveObservability } from '../modules/observability/observability-settings.js';
import { PROVIDER_SETTINGS, type ProviderSettings } from '../modules/providers/provider-settings.js';
import { ClickHouseConnection } from '../projections/clickhouse-analytics/index.js';
import { RelayProjection } from '../modules/relay/index.js';
import { KeyIndexProjection } from '../projections/key-index/index.js';
import { RoutingSnapshotProjection } from '../projections/routing-snapshot/index.js';
import { CommandExecutor } from './kernel/commands/command-executor.js';
import { GroupCommitter } from './kernel/event-store/group-committer.js';
import { SqlEventStore } from './kernel/event-store/sql-event-store.js';
import { ProjectionRunner } from './kernel/projections/projection-runner.js';
import { DATABASE } from './kernel/tokens.js';
import type { Platform } from './platform.js';

/** Makes the already-opened platform kernel injectable everywhere. */
@Global()
@Module({})
export class PlatformModule {
  static forRoot(platform: Platform): DynamicModule {
    const environment = platform.environment;
    // Each context gets its own settings, resolved once here; none sees the whole environment.
    const resilience = resolveResilience(environment.resilience);
    const admin: AdminSettings = { adminToken: environment.adminToken };
    const cache = resolveCacheSettings(environment.cache, environment.redisUrl, environment.nodeId);
    const inference: InferenceSettings = {
      durability: environment.durability, nodeId: environment.nodeId, redisUrl: environment.redisUrl, redisNamespace: cache.namespace, resilience,
      documents: resolveDocumentLimits(environment.documents),
    };
    const limits: LimitsSettings = { redisUrl: environment.redisUrl, nodeId: environment.nodeId, namespace: cache.namespace };
    const providerSettings: ProviderSettings = { connectTimeoutMs: resilience.deadlines.connectTimeoutMs };
    const auditTrail: AuditTrailSettings = { signer: platform.auditSigner };
    const observability: ObservabilityContext = { ...resolveObservability(environment.observability), logLevel: environment.logLevel, nodeId: environment.nodeId };
    const providers = [
      { provide: DATABASE, useValue: platform.database },
      { provide: ADMIN_SETTINGS, useValue: admin },
      { provide: INFERENCE_SETTINGS, useValue: inference },
      { provide: ADMISSION_SETTINGS, useValue: resolveAdmission(environment.admission) },
      { provide: LIMITS_SETTINGS, useValue: limits },
      { provide: PROVIDER_SETTINGS, useValue: providerSettings },
      { provide: CACHE_SETTINGS, useValue: cache },
      { provide: CONSOLE_SETTINGS, useValue: resolveConsoleSettings(environment.console, environment.redisUrl, cache.namespace, environment.nodeId) },
      { provide: CONTENT_SAFETY_SETTINGS, useValue: resolveContentSafetySettings(environment.contentSafety, environment.redisUrl, environment.nodeId) },
      { provide: OBSERVABILITY_SETTINGS, useValue: observability },
      { provide: AUDIT_TRAIL_SETTINGS, useValue: auditTrail },
      { provide: DataSource, useValue: platform.dataSource },
      { provide: SqlEventStore, useValue: platform.store },
      { provide: GroupCommitter, useValue: platform.committer },
      { provide: CommandExecutor, useValue: platform.executor },
      { provide: ProjectionRunner, useValue: platform.runner },
      { provide: RoutingSnapshotProjection, useValue: platform.routing },
      { provide: KeyIndexProjection, useValue: platform.keys },
      // Null without CLICKHOUSE_URL (inject with @Optional()).
      { provide: ClickHouseConnection, useValue: platform.clickhouse },
      // Null without SWITCHYARD_RELAY_URL (inject optional).
      { provide: RelayProjection, useValue: platform.relay },
    ];
    return {
      module: PlatformModule,
      imports: [CqrsModule.forRoot()],
      providers,
      exports: [...providers.map((p) => p.provide), CqrsModule],
    };
  }
}
