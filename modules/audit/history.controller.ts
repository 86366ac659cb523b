import { Controller, Get, Param, Query, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import { AdminApiError, AdminExceptionFilter, AdminGuard, adminQueryValidationPipe } from '../admin/index.js';
import { ControlPlaneAudit, UnknownActionError } from './control-plane-audit.js';
import { EventHistory } from './event-history.js';
import { AuditQueryDto, EventsQueryDto } from './history-query.dto.js';
import { PageTokenError } from './page-token.js';
import { RequestHistory } from './request-history.js';

const DEFAULT_LIMIT = 100;

/** The auditor's reads: the event log by position, one request reconstructed, control-plane changes by actor. */
@Controller('admin/v1')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminQueryValidationPipe())
export class HistoryController {
  constructor(
    private readonly events: EventHistory,
    private readonly requests: RequestHistory,
    private readonly audit: ControlPlaneAudit,
  ) {}

  @Get('events')
  async eventPage(@Query() query: EventsQueryDto) {
    return this.translated(() => this.events.page({
      after: query.after,
      stream: query.stream,
      types: query.type?.split(','),
      limit: query.limit ?? DEFAULT_LIMIT,
    }));
  }

  @Get('requests/:id')
  async request(@Param('id') id: string) {
    const history = await this.requests.show(id);
    if (!history) throw new AdminApiError(404, 'request_not_found', `No request ${id} is recorded (the id is the x-request-id of its answer).`);
    return history;
  }

  @Get('audit')
  async changes(@Query() query: AuditQueryDto) {
    const from = query.from ? new Date(query.from) : undefined;
    const to = query.to ? new Date(query.to) : undefined;
    if (from && to && from >= to) throw new AdminApiError(400, 'invalid_range', 'from must be before to.');
    return this.translated(() => this.audit.list({
      actor: query.actor, actions: query.action?.split(','), from, to, after: query.after, limit: query.limit ?? DEFAULT_LIMIT,
    }));
  }

  private async translated<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof PageTokenError) throw new AdminApiError(400, 'invalid_page_token', `${error.message}.`);
      if (error instanceof UnknownActionError) throw new AdminApiError(400, 'unknown_action', `${error.message}.`);
      throw error;
    }
  }
}
