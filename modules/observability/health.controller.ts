import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { RoutingSnapshotProjection } from '../../projections/routing-snapshot/index.js';
import { DATABASE, type Database } from '../../src/kernel/index.js';
import { haltView } from './projection-report.js';
import { Readiness } from './readiness.js';

/** Liveness and readiness for load balancers; no secrets, no addresses, no per-tenant data. */
@Controller()
export class HealthController {
  constructor(
    @Inject(DATABASE) private readonly database: Database,
    private readonly routing: RoutingSnapshotProjection,
    private readonly readiness: Readiness,
  ) {}

  /** Liveness: the process answers. Nothing it depends on is probed (a database outage must not restart it). */
  @Get('healthz')
  health() {
    return { status: 'ok' };
  }

  /**
   * 200 while this node can serve correctly, 503 otherwise, with every check and each failing part
   * named (event store, projection lag, halted durable projections, Redis and ClickHouse when configured;
   * which of them make the node unready is readinessVerdict's rule). The probe runs on every call, so readiness recovers by
   * itself when a dependency does.
   */
  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const { database, routing } = this;
    const report = await this.readiness.report();
    if (!report.ready) reply.status(503);
    return {
      status: report.ready ? 'ready' : 'unavailable',
      eventStore: { reachable: report.checks.eventStore.status === 'ok', kind: database.kind },
      checks: report.checks,
      problems: report.problems,
      projections: report.lags.map(({ name, behind }) => ({ name, behind })),
      // Durable projections stopped at an event they cannot apply; the node stays ready (readinessVerdict says why).
      halted: report.halted.map((halt) => ({ name: halt.name, ...haltView(halt) })),
      snapshotVersion: routing.current.version,
      aliases: routing.current.aliases.size,
    };
  }
}
