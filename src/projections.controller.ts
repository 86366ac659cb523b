import { Controller, Get, HttpCode, Inject, Logger, Param, Post, UseFilters, UseGuards } from '@nestjs/common';
import { AdminApiError, AdminExceptionFilter, AdminGuard } from '../modules/admin/index.js';
import { lastEventFor } from './cli/projection-positions.js';
import { PLATFORM } from './platform.module.js';
import type { Platform } from './platform.js';
import { projectionReport } from './projection-report.js';

/** What `POST /admin/v1/projections/{name}/rebuild` answers once the projection is reset. */
export interface RebuildStarted {
  projection: string;
  /** The global position the replay has to reach: the newest event of the projection's types when it was reset. */
  goal: number;
}

/**
 * `GET /admin/v1/projections`: every projection's position and lag, as `switchyard projections status --json`
 * prints it. `POST /admin/v1/projections/{name}/rebuild`: resets a durable projection and replays it while
 * the node keeps serving (what `switchyard projections rebuild` asks a server on the embedded store to do).
 */
@Controller('admin/v1/projections')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
export class ProjectionsController {
  private readonly logger = new Logger('Projections');

  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  @Get()
  report() {
    return projectionReport(this.platform);
  }

  /** Answers 202 once the reset is committed; the replay goes on in the background (follow it with GET). */
  @Post(':name/rebuild')
  @HttpCode(202)
  async rebuild(@Param('name') name: string): Promise<RebuildStarted> {
    const runner = this.platform.runner;
    const durable = runner.status().filter((s) => s.kind === 'durable');
    const status = durable.find((s) => s.name === name);
    if (!status) {
      throw new AdminApiError(404, 'unknown_projection', `Unknown projection '${name}'. Rebuildable: ${durable.map((s) => s.name).join(', ')} ` +
        '(cost-ledger includes tenant spend; per-node projections rebuild at every start).');
    }
    const goal = (await lastEventFor(this.platform.database, status.eventTypes))?.globalPosition ?? 0;
    await new Promise<void>((resolve, reject) => {
      let reset = false;
      runner.rebuild(name, () => {
        reset = true;
        resolve();
      }).then(
        () => this.logger.log(`rebuilt ${name} from position 0`),
        (error: Error) => {
          this.logger.error(`rebuilding ${name} failed: ${error.message}`);
          if (!reset) reject(error);
        },
      );
    });
    this.logger.log(`rebuilding ${name} from position 0 to ${goal} while serving`);
    return { projection: name, goal };
  }
}
