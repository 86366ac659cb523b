import { type DynamicModule, Module } from '@nestjs/common';
import { AccessModule } from '../modules/access/access.module.js';
import { CatalogModule } from '../modules/catalog/catalog.module.js';
import { InferenceModule } from '../modules/inference/inference.module.js';
import { ProvidersModule } from '../modules/providers/providers.module.js';
import { ConfigApplier } from './config/apply/config-applier.js';
import { HealthController } from './health.controller.js';
import type { Platform } from './platform.js';
import { PlatformModule } from './platform.module.js';

@Module({})
export class AppModule {
  static forRoot(platform: Platform): DynamicModule {
    return {
      module: AppModule,
      imports: [PlatformModule.forRoot(platform), CatalogModule, AccessModule, ProvidersModule, InferenceModule],
      controllers: [HealthController],
      providers: [ConfigApplier],
    };
  }
}
