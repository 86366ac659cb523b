import { Controller, Get, Inject, UseFilters, UseGuards } from '@nestjs/common';
import { AdminExceptionFilter } from '../modules/admin/admin-exception.filter.js';
import { AdminGuard } from '../modules/admin/admin.guard.js';
import { LimitsRedis } from '../modules/limits/limits-redis.js';
import { formatPosition } from './kernel/event-store/log-position.js';
import { PLATFORM } from './platform.module.js';
import type { Platform } from './platform.js';

/**
 * `GET /admin/v1/status`: what this node serves. Comparing `snapshot.version` across nodes shows whether
 * a change has reached all of them (the version is the global position of the last catalog event applied).
 */
@Controller('admin/v1/status')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
export class StatusController {
  constructor(
    @Inject(PLATFORM) private readonly platform: Platform,
    private readonly limits: LimitsRedis,
  ) {}

  @Get()
  async status() {
    const { routing, keys, runner, store, environment, database } = this.platform;
    const snapshot = routing.current;
    const eventStore = await database.checkHealth(1_000);
    return {
      nodeId: environment.nodeId,
      snapshot: {
        version: snapshot.version,
        aliases: snapshot.aliases.size,
        deployments: snapshot.deployments.size,
        problems: routing.problems,
      },
      keyIndex: { version: keys.version },
      // `degraded: true`: Redis is configured but away, and this node applies rate limits and budgets on its own.
      limits: this.limits.status(),
      eventLog: { head: eventStore.reachable ? await store.headPosition() : null, ...eventStore },
      // `position` is the last event applied; `logPosition` the read cursor, `transactionId:globalPosition`.
      projections: runner.status().map(({ name, kind, position, lastGlobalPosition, leaseHeld, lastError }) => ({
        name, kind, position: lastGlobalPosition, logPosition: formatPosition(position), leaseHeld, lastError,
      })),
    };
  }
}
