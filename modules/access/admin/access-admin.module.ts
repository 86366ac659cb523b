import { Module } from '@nestjs/common';
import type { Environment } from '../../../src/config/environment.js';
import type { Database } from '../../../src/kernel/database/database.js';
import { DATABASE, ENVIRONMENT } from '../../../src/platform.module.js';
import { AccessModule } from '../access.module.js';
import { KeyExpirySweeper } from '../api-key/key-expiry-sweeper.js';
import { AdminCommands } from './admin-commands.js';
import { AdminTokens } from './admin-tokens.js';
import { AdminGuard } from './admin.guard.js';
import { KeysController } from './keys.controller.js';
import { TenantSpendReader } from './tenant-spend-reader.js';
import { SpendHistory } from './spend-history.js';
import { TenantsController } from './tenants.controller.js';

/**
 * The serving node's side of access control: the admin token, the admin API guard and command plumbing
 * (exported for the other contexts' admin controllers), tenants and keys endpoints, and key expiry.
 */
@Module({
  imports: [AccessModule],
  controllers: [TenantsController, KeysController],
  providers: [
    {
      provide: AdminTokens,
      useFactory: async (database: Database, environment: Environment) => {
        const tokens = new AdminTokens(database, environment.adminToken);
        await tokens.initialize();
        return tokens;
      },
      inject: [DATABASE, ENVIRONMENT],
    },
    AdminGuard,
    AdminCommands,
    TenantSpendReader,
    { provide: SpendHistory, useFactory: (database: Database) => new SpendHistory(database), inject: [DATABASE] },
    KeyExpirySweeper,
  ],
  exports: [AccessModule, AdminTokens, AdminGuard, AdminCommands],
})
export class AccessAdminModule {}
