import { Module } from '@nestjs/common';
import { AdminModule } from '../../admin/index.js';
import { CatalogModule } from '../catalog.module.js';
import { AliasesController } from './aliases.controller.js';
import { DeploymentsController } from './deployments.controller.js';
import { PriceImportController } from './price-import.controller.js';
import { PricesController } from './prices.controller.js';
import { ProvidersController } from './providers.controller.js';

/** The catalog's admin API: providers, deployments, prices (and their import from a price map) and aliases under /admin/v1. */
@Module({
  imports: [CatalogModule, AdminModule],
  controllers: [ProvidersController, DeploymentsController, PricesController, PriceImportController, AliasesController],
})
export class CatalogAdminModule {}
