import { Controller, Get, Inject, Query, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import { IsIn, IsOptional, Matches } from 'class-validator';
import { type Database, DATABASE } from '../../src/kernel/index.js';
import { AdminArea, AdminApiError, AdminExceptionFilter, AdminGuard, adminQueryValidationPipe } from '../admin/index.js';
import { ledgerUsage, providersOfType } from './reconciliation/reconcile.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export class LedgerUsageQueryDto {
  @IsIn(['openai', 'anthropic'])
  providerType!: 'openai' | 'anthropic';

  /** Comma-separated provider ids; absent = every provider of that type ever registered. */
  @IsOptional() @Matches(/^[A-Za-z0-9._-]{1,64}(,[A-Za-z0-9._-]{1,64}){0,63}$/, { message: 'providerId must be provider ids separated by commas' })
  providerId?: string;

  @Matches(DAY, { message: 'from must be a UTC day (YYYY-MM-DD)' })
  from!: string;

  @Matches(DAY, { message: 'to must be a UTC day (YYYY-MM-DD)' })
  to!: string;
}

/**
 * `GET /admin/v1/analytics/ledger-usage`: the ledger's provider attempts by UTC day and model for the
 * accounts of one provider type — the side of `switchyard reconcile` that reads the store (the CLI asks a
 * server holding the embedded store for it). Tokens are exact; cost is decimal text.
 */
@AdminArea('analytics')
@Controller('admin/v1/analytics')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminQueryValidationPipe())
export class LedgerUsageController {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  @Get('ledger-usage')
  async usage(@Query() query: LedgerUsageQueryDto) {
    if (query.from > query.to) throw new AdminApiError(400, 'invalid_range', 'from must not be after to.');
    const providerIds = query.providerId ? query.providerId.split(',') : await providersOfType(this.database, query.providerType);
    const rows = providerIds.length ? await ledgerUsage(this.database, providerIds, query.from, query.to) : [];
    return { providerType: query.providerType, providerIds, data: rows.map((row) => ({ ...row, costUsd: row.costUsd.toFixed() })) };
  }
}
