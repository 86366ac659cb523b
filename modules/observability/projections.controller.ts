import { Controller, Get, HttpCode, Inject, Logger, Optional, Param, Post, UseFilters, UseGuards } from '@nestjs/common';
import { ClickHouseConnection } from '../../projections/clickhouse-analytics/index.js';
import { DATABASE, type Database, lastEventFor, ProjectionRunner, RebuildInProgressError, SqlEventStore } from '../../src/kernel/index.js';
import { AdminArea, AdminApiError, AdminExceptionFilter, AdminGuard } from '../admin/index.js';
import { projectionReport } from './projection-report.js';
import { type ResumeOutcome, resumeProjection } from './projection-resume.js';

/** What `POST /admin/v1/projections/{name}/rebuild` answers once the replay aside has begun. */
export interface RebuildStarted {
  projection: string;
  /** The global position the replay has to reach at least: the newest event of the projection's types when it began. */
  goal: number;
}

/**
 * `GET /admin/v1/projections`: every projection's position and lag, halts and rebuilds, as `switchyard
 * projections status --json` prints it. `POST /admin/v1/projections/{name}/rebuild`: replays a durable
 * projection aside and swaps it in while the node keeps serving (what `switchyard projections rebuild` asks a
 * server on the embedded store to do). `POST /admin/v1/projections/{name}/resume`: clears a halt and says
 * whether the projection got past its event (`switchyard projections resume`).
 */
@AdminArea('projections')
@Controller('admin/v1/projections')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
export class ProjectionsController {
  private readonly logger = new Logger('Projections');

  constructor(
    private readonly store: SqlEventStore,
    private readonly runner: ProjectionRunner,
    @Inject(DATABASE) private readonly database: Database,
    // Null without CLICKHOUSE_URL.
    @Optional() @Inject(ClickHouseConnection) private readonly clickhouse: ClickHouseConnection | null,
  ) {}

  @Get()
  report() {
    return projectionReport({ store: this.store, runner: this.runner, database: this.database, clickhouse: this.clickhouse ?? null });
  }

  /**
   * Answers 202 once the replacement's storage exists and its replay has begun; the replay and the swap go
   * on in the background (follow `rebuild` in GET: `done`, or `failed` with the event and the error — the
   * live read model untouched). 409 while a rebuild of the projection is under way.
   */
  @Post(':name/rebuild')
  @HttpCode(202)
  async rebuild(@Param('name') name: string): Promise<RebuildStarted> {
    const status = this.durable(name, 'Rebuildable');
    const goal = (await lastEventFor(this.database, status.eventTypes))?.globalPosition ?? 0;
    await new Promise<void>((resolve, reject) => {
      let started = false;
      this.runner.rebuild(name, () => {
        started = true;
        resolve();
      }).catch((error: Error) => {
        // After the start the runner has logged the failure and the report shows it.
        if (started) return;
        reject(error instanceof RebuildInProgressError ? new AdminApiError(409, 'rebuild_in_progress', error.message) : error);
      });
    });
    this.logger.log(`rebuilding ${name} aside from position 0 (the log's head for it: ${goal}) while serving`);
    return { projection: name, goal };
  }

  /**
   * Clears the projection's halt (wherever it runs) and waits up to 30 s for the outcome: `moved-past`,
   * `halted-again` (with the new halt), `pending` (no process applied the event meanwhile) or `not-halted`.
   */
  @Post(':name/resume')
  @HttpCode(200)
  async resume(@Param('name') name: string): Promise<ResumeOutcome> {
    this.durable(name, 'Durable projections');
    return resumeProjection({ runner: this.runner, database: this.database }, name);
  }

  private durable(name: string, listed: string) {
    const durable = this.runner.status().filter((s) => s.kind === 'durable');
    const status = durable.find((s) => s.name === name);
    if (!status) {
      throw new AdminApiError(404, 'unknown_projection', `Unknown projection '${name}'. ${listed}: ${durable.map((s) => s.name).join(', ')} ` +
        '(cost-ledger includes tenant spend; per-node projections rebuild at every start).');
    }
    return status;
  }
}
