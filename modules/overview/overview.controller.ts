import { Controller, Get, Inject, Query, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { KeyIndexProjection } from '../../projections/key-index/index.js';
import { RoutingSnapshotProjection } from '../../projections/routing-snapshot/index.js';
import { DATABASE, type Database, ProjectionRunner } from '../../src/kernel/index.js';
import { AdminArea, AdminExceptionFilter, AdminGuard, adminQueryValidationPipe } from '../admin/index.js';
import { DeploymentHealth } from '../inference/index.js';
import { budgetAlerts } from './budget-watch.js';
import { liveWindow } from './live-window.js';
import { projectionLags } from './projection-lag.js';
import { spendDays } from './spend-days.js';

/** `GET /admin/v1/overview?window=` */
export class OverviewQueryDto {
  /** Seconds of traffic the rate, errors and latency cover. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(10) @Max(900)
  window?: number;
}

const DEFAULT_WINDOW_SECONDS = 60;

/**
 * `GET /admin/v1/overview`: the console's first page in one answer — live traffic (rate, errors by class,
 * P50/P95 latency) over a recent window, spend today against yesterday, breaker states, projection lag and
 * the tenants at their budget's alert threshold. Every part is a bounded read: the window's rows of
 * `request_summaries`, one `tenant_spend` row per tenant, the breakers and projections this node holds.
 * Platform administration only (no @TenantScoped): it shows every tenant's traffic.
 */
@Controller('admin/v1/overview')
@AdminArea('status')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminQueryValidationPipe())
export class OverviewController {
  constructor(
    @Inject(DATABASE) private readonly database: Database,
    private readonly runner: ProjectionRunner,
    private readonly routing: RoutingSnapshotProjection,
    private readonly keys: KeyIndexProjection,
    private readonly health: DeploymentHealth,
  ) {}

  @Get()
  async overview(@Query() query: OverviewQueryDto) {
    const now = new Date();
    const [live, spend, projections, alerts] = await Promise.all([
      liveWindow(this.database, query.window ?? DEFAULT_WINDOW_SECONDS, now),
      spendDays(this.database, now),
      projectionLags(this.database, this.runner, now),
      budgetAlerts(this.database, this.keys.state.tenants, now),
    ]);
    return {
      ...live,
      spend,
      // This node's breakers; with Redis, nodes share their openings (docs/routing-and-resilience.md), so they agree.
      breakers: [...this.routing.state.deployments]
        .filter(([, deployment]) => deployment.status !== 'absent')
        .map(([deploymentId]) => ({ deploymentId, state: this.health.stateOf(deploymentId) })),
      projections,
      budgetAlerts: alerts,
    };
  }
}
