import { Module } from '@nestjs/common';
import { AdminModule } from '../../admin/index.js';
import { CacheModule } from '../cache.module.js';
import { CacheController } from './cache.controller.js';

/** The exact cache's admin endpoint (purge), behind the admin guard. */
@Module({
  imports: [AdminModule, CacheModule],
  controllers: [CacheController],
})
export class CacheAdminModule {}
