import { Controller, Get, Inject, UseFilters, UseGuards } from '@nestjs/common';
import { AdminExceptionFilter, AdminGuard } from '../modules/admin/index.js';
import { PLATFORM } from './platform.module.js';
import type { Platform } from './platform.js';
import { projectionReport } from './projection-report.js';

/** `GET /admin/v1/projections`: every projection's position and lag, as `switchyard projections status --json` prints it. */
@Controller('admin/v1/projections')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
export class ProjectionsController {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  @Get()
  report() {
    return projectionReport(this.platform);
  }
}
