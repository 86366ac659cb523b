import { type DynamicModule, Module } from '@nestjs/common';
import { AccessModule } from '../../modules/access/access.module.js';
import { CatalogModule } from '../../modules/catalog/catalog.module.js';
import { ConfigApplier } from '../config/apply/config-applier.js';
import { ConfigurationCommand } from '../config/apply/configuration.commands.js';
import type { Platform } from '../platform.js';
import { PlatformModule } from '../platform.module.js';

/** The command side without the HTTP server, for CLI commands that send commands. */
@Module({})
export class CliModule {
  static forRoot(platform: Platform): DynamicModule {
    return {
      module: CliModule,
      imports: [PlatformModule.forRoot(platform), CatalogModule, AccessModule],
      providers: [ConfigApplier, ConfigurationCommand.Handler],
      exports: [ConfigApplier],
    };
  }
}
