import { Module } from '@nestjs/common';
import { DATABASE, type Database } from '../../../src/kernel/index.js';
import { AdminModule } from '../../admin/index.js';
import { AccessModule } from '../access.module.js';
import { KeyExpirySweeper } from '../api-key/key-expiry-sweeper.js';
import { ContentPoliciesController } from './content-policies.controller.js';
import { KeysController } from './keys.controller.js';
import { SpendHistory } from './spend-history.js';
import { TenantSpendReader } from './tenant-spend-reader.js';
import { TenantsController } from './tenants.controller.js';

/** The serving node's side of access control: the tenants, keys and content-policies admin endpoints (spend by period included), and key expiry. */
@Module({
  imports: [AccessModule, AdminModule],
  controllers: [TenantsController, KeysController, ContentPoliciesController],
  providers: [
    TenantSpendReader,
    { provide: SpendHistory, useFactory: (database: Database) => new SpendHistory(database), inject: [DATABASE] },
    KeyExpirySweeper,
  ],
})
export class AccessAdminModule {}
