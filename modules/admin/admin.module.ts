import { Module } from '@nestjs/common';
import { type Database, DATABASE } from '../../src/kernel/index.js';
import { AdminCommands } from './admin-commands.js';
import { ADMIN_SETTINGS, type AdminSettings } from './admin-settings.js';
import { AdminTokens } from './admin-tokens.js';
import { AdminGuard } from './admin.guard.js';

/**
 * The admin API's plumbing, shared by every context with admin routes: the admin token, the guard
 * (which also accepts gateway keys with the `admin` or `admin:platform` scope, through the
 * AdminKeyVerifier that access provides, and confines `admin` keys to their tenant) and the command helper. Error filter and validation pipe are plain exports of index.ts.
 */
@Module({
  providers: [
    {
      provide: AdminTokens,
      useFactory: async (database: Database, settings: AdminSettings) => {
        const tokens = new AdminTokens(database, settings.adminToken);
        await tokens.initialize();
        return tokens;
      },
      inject: [DATABASE, ADMIN_SETTINGS],
    },
    AdminGuard,
    AdminCommands,
  ],
  exports: [AdminTokens, AdminGuard, AdminCommands],
})
export class AdminModule {}
