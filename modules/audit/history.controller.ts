import { Controller, Get, Param, Query, Req, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AdminArea, AdminApiError, AdminExceptionFilter, AdminGuard, adminQueryValidationPipe, principalOf, TenantScoped } from '../admin/index.js';
import { ControlPlaneAudit, UnknownActionError } from './control-plane-audit.js';
import { EventHistory } from './event-history.js';
import { AuditQueryDto, EventsQueryDto, RequestsQueryDto } from './history-query.dto.js';
import { PageTokenError } from './page-token.js';
import { RequestHistory } from './request-history.js';
import { RequestSearch } from './request-search.js';

const DEFAULT_LIMIT = 100;
/** Request search's page: what a console table shows at once. */
const DEFAULT_REQUEST_LIMIT = 50;

/**
 * The auditor's reads: the event log by position, requests searched and one request reconstructed,
 * control-plane changes by actor.
 * A tenant admin reads only what is about its tenant: its tenant stream, its keys' streams and its keys'
 * requests; another tenant's request is 404, as one that was never recorded.
 */
@AdminArea('history')
@Controller('admin/v1')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminQueryValidationPipe())
export class HistoryController {
  constructor(
    private readonly events: EventHistory,
    private readonly requests: RequestHistory,
    private readonly search: RequestSearch,
    private readonly audit: ControlPlaneAudit,
  ) {}

  @Get('events')
  @TenantScoped()
  async eventPage(@Query() query: EventsQueryDto, @Req() request: FastifyRequest) {
    const tenantId = principalOf(request).tenantId ?? undefined;
    return this.translated(() => this.events.page({
      after: query.after,
      stream: query.stream,
      types: query.type?.split(','),
      limit: query.limit ?? DEFAULT_LIMIT,
      ...(tenantId !== undefined ? { tenantId } : {}),
    }));
  }

  /**
   * Requests newest first, filtered, in keyset pages (`nextPageToken`). A tenant admin sees its own
   * tenant's only; naming another tenant is that tenant's 404.
   */
  @Get('requests')
  @TenantScoped()
  async requestPage(@Query() query: RequestsQueryDto, @Req() request: FastifyRequest) {
    const tenantId = principalOf(request).confine(query.tenant);
    const from = query.from ? new Date(query.from) : undefined;
    const to = query.to ? new Date(query.to) : undefined;
    if (from && to && from >= to) throw new AdminApiError(400, 'invalid_range', 'from must be before to.');
    return this.translated(() => this.search.page({
      ...(tenantId !== null ? { tenantId } : {}),
      keyId: query.key, alias: query.alias, status: query.status, from, to, limit: query.limit ?? DEFAULT_REQUEST_LIMIT, pageToken: query.pageToken,
    }));
  }

  @Get('requests/:id')
  @TenantScoped()
  async request(@Param('id') id: string, @Req() request: FastifyRequest) {
    const history = await this.requests.show(id, principalOf(request).tenantId ?? undefined);
    if (!history) throw new AdminApiError(404, 'request_not_found', `No request ${id} is recorded (the id is the x-request-id of its answer).`);
    return history;
  }

  @Get('audit')
  @AdminArea('audit')
  @TenantScoped()
  async changes(@Query() query: AuditQueryDto, @Req() request: FastifyRequest) {
    const tenantId = principalOf(request).tenantId ?? undefined;
    const from = query.from ? new Date(query.from) : undefined;
    const to = query.to ? new Date(query.to) : undefined;
    if (from && to && from >= to) throw new AdminApiError(400, 'invalid_range', 'from must be before to.');
    return this.translated(() => this.audit.list({
      actor: query.actor, actions: query.action?.split(','), from, to, after: query.after, limit: query.limit ?? DEFAULT_LIMIT,
      ...(tenantId !== undefined ? { tenantId } : {}),
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
