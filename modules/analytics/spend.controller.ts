import { Controller, Get, Query, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminApiError, AdminExceptionFilter, AdminGuard, adminQueryValidationPipe, principalOf, TenantScoped } from '../admin/index.js';
import { spendCsv } from './spend-csv.js';
import { SPEND_DIMENSION_NAMES, type SpendDimension, type SpendQuery } from './spend-query.js';
import { SpendQueryDto } from './spend-query.dto.js';
import { AnalyticsSourceError, SpendReports } from './spend-reports.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Bounds one answer: about 14 months of hours, or 27 years of days. */
const MAX_BUCKETS = 10_000;

/**
 * `GET /admin/v1/analytics/spend`: spend by period and any of tenant, key, alias, deployment, provider, model.
 * A tenant admin's report is always filtered to its own tenant (`tenant=` naming another is 404).
 */
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
    reply.header('cache-control', 'no-store');
    const csv = dto.format === 'csv' || (dto.format === undefined && /\btext\/csv\b/.test(String(request.headers.accept ?? '')));
    if (csv) {
      reply.header('content-type', 'text/csv; charset=utf-8');
      reply.header('content-disposition', `attachment; filename="spend-${query.granularity}-${dto.from.slice(0, 10)}-${dto.to.slice(0, 10)}.csv"`);
      return spendCsv(report.rows, query.groupBy);
    }
    return {
      source: report.source,
      ...(report.fallback ? { fallback: report.fallback } : {}),
      from: query.from.toISOString(),
      to: query.to.toISOString(),
      granularity: query.granularity,
      groupBy: query.groupBy,
      filters: query.filters,
      rows: report.rows.map(({ group, ...metrics }) => ({ ...group, ...metrics })),
      totals: report.totals,
    };
  }
}

function spendQuery(dto: SpendQueryDto): SpendQuery {
  const granularity = dto.granularity ?? 'day';
  const from = new Date(dto.from);
  const to = new Date(dto.to);
  const step = granularity === 'hour' ? HOUR_MS : DAY_MS;
  for (const [name, at] of [['from', from], ['to', to]] as const) {
    // Rollups cannot split a bucket: a range must start and end on bucket boundaries (UTC).
    if (at.getTime() % step !== 0) {
      throw new AdminApiError(400, 'unaligned_range', `${name} must be on ${granularity === 'hour' ? 'a whole hour' : 'midnight'} (UTC) for granularity=${granularity}.`);
    }
  }
  if (from >= to) throw new AdminApiError(400, 'invalid_range', 'from must be before to.');
  if ((to.getTime() - from.getTime()) / step > MAX_BUCKETS) {
    throw new AdminApiError(400, 'range_too_large', `At most ${MAX_BUCKETS} ${granularity}s per request; narrow the range or use granularity=day.`);
  }
  const groupBy = dto.groupBy ? [...new Set(dto.groupBy.split(','))] as SpendDimension[] : [];
  const filters = Object.fromEntries(SPEND_DIMENSION_NAMES.filter((d) => dto[d] !== undefined).map((d) => [d, dto[d]!]));
  return { from, to, granularity, groupBy, filters };
}
