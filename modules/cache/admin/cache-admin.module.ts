import { Module } from '@nestjs/common';
import { AccessAdminModule } from '../../access/admin/access-admin.module.js';
import { CacheModule } from '../cache.module.js';
import { CacheController } from './cache.controller.js';

/** The exact cache's admin endpoint (purge), behind the admin guard. */
@Module({
  imports: [AccessAdminModule, CacheModule],
  controllers: [CacheController],
})
export class CacheAdminModule {}
