import { Controller, Get, Inject, UseFilters, UseGuards } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { KeyIndexProjection } from '../../projections/key-index/index.js';
import { RoutingSnapshotProjection } from '../../projections/routing-snapshot/index.js';
import { DATABASE, type Database, formatPosition, ProjectionRunner, SqlEventStore } from '../../src/kernel/index.js';
import { AdminArea, AdminExceptionFilter, AdminGuard } from '../admin/index.js';
import { LimitsRedis } from '../limits/index.js';
import { OBSERVABILITY_SETTINGS, type ObservabilityContext } from './observability-settings.js';
import { haltView, rebuildView } from './projection-report.js';
import { Readiness } from './readiness.js';

/**
 * `GET /admin/v1/status`: what this node serves. Comparing `snapshot.version` across nodes shows whether
 * a change has reached all of them (the version is the global position of the last catalog event applied).
 */
@AdminArea('status')
@Controller('admin/v1/status')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
export class StatusController {
  constructor(
    @Inject(OBSERVABILITY_SETTINGS) private readonly context: ObservabilityContext,
    @Inject(DATABASE) private readonly database: Database,
    private readonly store: SqlEventStore,
    private readonly runner: ProjectionRunner,
    private readonly routing: RoutingSnapshotProjection,
    private readonly keys: KeyIndexProjection,
    private readonly limits: LimitsRedis,
    private readonly readiness: Readiness,
  ) {}

  @Get()
  async status() {
    const { routing, keys, runner, store, database } = this;
    const snapshot = routing.current;
    const eventStore = await database.checkHealth(1_000);
    const report = await this.readiness.report();
    const behind = new Map(report.lags.map((lag) => [lag.name, lag.behind]));
    const halted = new Map(report.halted.map((halt) => [halt.name, halt]));
    return {
      nodeId: this.context.nodeId,
      versions: {
        switchyard: SWITCHYARD_VERSION,
        node: process.versions.node,
        eventStore: eventStore.reachable ? await this.serverVersion() : null,
      },
      uptimeSeconds: Math.round(process.uptime()),
      ready: report.ready,
      checks: report.checks,
      problems: report.problems,
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
      // `behind`: events not applied yet (null for a durable projection another process runs). `halted`: the
      // event a durable projection stopped at and why, wherever it runs; `rebuild`: this node's latest rebuild.
      projections: runner.status().map(({ name, kind, position, lastGlobalPosition, leaseHeld, lastError, rebuild }) => ({
        name, kind, position: lastGlobalPosition, logPosition: formatPosition(position), leaseHeld, lastError, behind: behind.get(name) ?? null,
        halted: halted.has(name) ? haltView(halted.get(name)!) : null, rebuild: rebuild ? rebuildView(rebuild) : null,
      })),
    };
  }

  /** `PostgreSQL 17.2` or `PGlite (PostgreSQL 17.x)`: the server's own version line, without build details. */
  private async serverVersion(): Promise<string | null> {
    const rows = await this.database.query<{ version: string }>('SELECT version() AS version').catch(() => []);
    const version = rows[0]?.version?.split(' on ')[0] ?? null;
    return this.database.kind === 'pglite' && version ? `PGlite (${version})` : version;
  }
}

/** The package's version, read once. */
const SWITCHYARD_VERSION: string = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')).version;
