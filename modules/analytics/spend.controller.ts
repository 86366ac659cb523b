import { Controller, Get, Query, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminArea, AdminApiError, AdminExceptionFilter, AdminGuard, adminQueryValidationPipe, principalOf, TenantScoped } from '../admin/index.js';
import { spendCsv } from './spend-csv.js';
import { spendDocument } from './spend-document.js';
import { SPEND_DIMENSION_NAMES, type SpendDimension } from './spend-query.js';
import { SpendQueryDto } from './spend-query.dto.js';
import { AnalyticsSourceError, SpendReports } from './spend-reports.js';
import { type ResolvedSpendQuery, resolveSpendRequest, SpendRequestError } from './spend-range.js';

/**
 * `GET /admin/v1/analytics/spend`: spend by period and any of tenant, key, alias, deployment, provider, model.
 * A tenant admin's report is always filtered to its own tenant (`tenant=` naming another is 404).
 */
@AdminArea('analytics')
@Controller('admin/v1/analytics')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminQueryValidationPipe())
export class SpendController {
  constructor(private readonly reports: SpendReports) {}

  @Get('spend')
  @TenantScoped()
  async spend(@Query() dto: SpendQueryDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const tenant = principalOf(request).confine(dto.tenant);
    const query = spendQuery(dto);
    if (tenant !== null) query.filters = { ...query.filters, tenant };
    let report;
    try {
      report = await this.reports.report(query, dto.source ?? 'auto');
    } catch (error) {
      if (error instanceof AnalyticsSourceError) throw new AdminApiError(error.status, error.code, error.message);
      throw error;
    }
    reply.header('x-switchyard-analytics-source', report.source);
    // CSV has no room for it in the body (a comment row would break parsers): the range travels as a header.
    reply.header('x-switchyard-analytics-range', `${query.from.toISOString()}/${query.to.toISOString()}; ${query.range}`);
    reply.header('cache-control', 'no-store');
    const csv = dto.format === 'csv' || (dto.format === undefined && /\btext\/csv\b/.test(String(request.headers.accept ?? '')));
    if (csv) {
      reply.header('content-type', 'text/csv; charset=utf-8');
      reply.header('content-disposition', `attachment; filename="spend-${query.granularity}-${query.from.toISOString().slice(0, 10)}-${query.to.toISOString().slice(0, 10)}.csv"`);
      return spendCsv(report.rows, query.groupBy);
    }
    return spendDocument(query, report);
  }
}

/** The query the parameters stand for; a range the report cannot answer is a 400 naming the parameter. */
function spendQuery(dto: SpendQueryDto): ResolvedSpendQuery {
  try {
    return resolveSpendRequest({
      from: dto.from,
      to: dto.to,
      granularity: dto.granularity,
      groupBy: dto.groupBy ? (dto.groupBy.split(',') as SpendDimension[]) : [],
      filters: Object.fromEntries(SPEND_DIMENSION_NAMES.filter((d) => dto[d] !== undefined).map((d) => [d, dto[d]!])),
    });
  } catch (error) {
    if (error instanceof SpendRequestError) throw new AdminApiError(400, error.code, error.message, [{ path: error.field, message: error.message }]);
    throw error;
  }
}
