import { type DynamicModule, Module } from '@nestjs/common';
import { AccessModule } from '../modules/access/access.module.js';
import { AccessAdminModule } from '../modules/access/admin/access-admin.module.js';
import { AdminModule } from '../modules/admin/admin.module.js';
import { AnalyticsModule } from '../modules/analytics/analytics.module.js';
import { AuditModule } from '../modules/audit/audit.module.js';
import { CacheAdminModule } from '../modules/cache/admin/cache-admin.module.js';
import { CatalogAdminModule } from '../modules/catalog/admin/catalog-admin.module.js';
import { CatalogModule } from '../modules/catalog/catalog.module.js';
import { ConsoleAssetsModule } from '../modules/console/console-assets.module.js';
import { ConsoleModule } from '../modules/console/console.module.js';
import { ObservabilityModule } from '../modules/observability/index.js';
import { InferenceModule } from '../modules/inference/inference.module.js';
import { OverviewModule } from '../modules/overview/index.js';
import { LimitsModule } from '../modules/limits/limits.module.js';
import { ProvidersModule } from '../modules/providers/providers.module.js';
import { ConfigApplyController } from './config/apply/config-apply.controller.js';
import { ConfigApplier } from './config/apply/config-applier.js';
import { ConfigurationCommand } from './config/apply/configuration.commands.js';
import type { Platform } from './platform.js';
import { PlatformModule } from './platform.module.js';

@Module({})
export class AppModule {
  static forRoot(platform: Platform): DynamicModule {
    return {
      module: AppModule,
      imports: [PlatformModule.forRoot(platform), ObservabilityModule, CatalogModule, AccessModule, ProvidersModule, LimitsModule, InferenceModule, AdminModule,
        AccessAdminModule, CatalogAdminModule, AnalyticsModule, AuditModule, CacheAdminModule, ConsoleModule, OverviewModule, ConsoleAssetsModule],
      controllers: [ConfigApplyController],
      providers: [ConfigApplier, ConfigurationCommand.Handler],
    };
  }
}
