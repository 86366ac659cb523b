import { Module } from '@nestjs/common';
import { AdminModule } from '../admin/index.js';
import { InferenceModule } from '../inference/index.js';
import { OverviewController } from './overview.controller.js';

/** The operators' overview (the console's first page): reads across traffic, spend, breakers, projections and budgets. */
@Module({
  imports: [AdminModule, InferenceModule],
  controllers: [OverviewController],
})
export class OverviewModule {}
