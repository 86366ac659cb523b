import { Module } from '@nestjs/common';
import { AdminModule } from '../admin/index.js';
import { LedgerUsageController } from './ledger-usage.controller.js';
import { SpendController } from './spend.controller.js';
import { SpendReports } from './spend-reports.js';

/** Finance's context: spend reports from ClickHouse rollups or, without ClickHouse, the PostgreSQL ledger. */
@Module({
  imports: [AdminModule],
  controllers: [SpendController, LedgerUsageController],
  providers: [SpendReports],
  exports: [SpendReports],
})
export class AnalyticsModule {}
