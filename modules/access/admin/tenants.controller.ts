import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import { Decimal } from 'decimal.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tenantStream } from '../../../events/index.js';
import { KeyIndexProjection } from '../../../projections/key-index/index.js';
import { TenantCommand } from '../access.commands.js';
import type { TenantState } from '../tenant/tenant.decider.js';
import { AdminApiError, AdminCommands, AdminExceptionFilter, AdminGuard, adminValidationPipe, etag, LimitsDto, limitsOf, ReasonDto } from '../../admin/index.js';
import { SpendHistory } from './spend-history.js';
import { SpendQueryDto } from './spend.dto.js';
import { CreateTenantDto, TenantBudgetDto } from './tenant.dto.js';
import { type CurrentSpend, TenantSpendReader } from './tenant-spend-reader.js';
import { budgetOf } from './tenant.dto.js';

/** `/admin/v1/tenants`: create, limits, budget, suspend and reinstate; reads include current spend. */
@Controller('admin/v1/tenants')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminValidationPipe())
export class TenantsController {
  constructor(
    private readonly commands: AdminCommands,
    private readonly keys: KeyIndexProjection,
    private readonly history: SpendHistory,
    private readonly spend: TenantSpendReader,
  ) {}

  @Get()
  async list() {
    await this.commands.fresh();
    const tenants = [...this.keys.state.tenants.entries()].filter(([, t]) => t.status !== 'absent');
    const spend = await this.spend.current(tenants.map(([id]) => id));
    return { data: tenants.map(([id, tenant]) => this.view(id, tenant, spend.get(id)!)) };
  }

  @Get(':id')
  async one(@Param('id') id: string, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.commands.fresh();
    const tenant = this.keys.state.tenants.get(id);
    if (!tenant || tenant.status === 'absent') throw new AdminApiError(404, 'tenant_not_found', `Tenant ${id} does not exist.`);
    const view = this.view(id, tenant, (await this.spend.current([id])).get(id)!);
    reply.header('etag', etag(view.version));
    return view;
  }

  /** Spend by period (`?period=day|month&from=&to=`), with the budget it counts against. */
  @Get(':id/spend')
  async spendByPeriod(@Param('id') id: string, @Query() query: SpendQueryDto) {
    await this.commands.fresh();
    const found = this.keys.state.tenants.get(id);
    if (!found || found.status === 'absent') throw new AdminApiError(404, 'tenant_not_found', `Tenant ${id} does not exist.`);
    const period = query.period ?? 'month';
    const data = await this.history.of('tenant', id, period, query.from ? new Date(query.from) : null, query.to ? new Date(query.to) : null);
    return { tenant: id, period, budget: found.budget, data };
  }

  @Post()
  async create(@Body() body: CreateTenantDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(TenantCommand, { type: 'CreateTenant', tenantId: body.id, name: body.name ?? body.id }, request, reply);
    reply.status(outcome.events.length ? 201 : 200);
    return this.after(body.id, outcome.events.map((e) => e.type));
  }

  @Put(':id/limits')
  async setLimits(@Param('id') id: string, @Body() body: LimitsDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(TenantCommand, { type: 'SetTenantLimits', tenantId: id, limits: limitsOf(body) }, request, reply);
    return this.after(id, outcome.events.map((e) => e.type));
  }

  @Put(':id/budget')
  async setBudget(@Param('id') id: string, @Body() body: TenantBudgetDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const budget = budgetOf(body);
    const outcome = await this.commands.send(TenantCommand, { type: 'SetTenantBudget', tenantId: id, budget }, request, reply);
    return this.after(id, outcome.events.map((e) => e.type));
  }

  @Delete(':id/budget')
  async clearBudget(@Param('id') id: string, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(TenantCommand, { type: 'SetTenantBudget', tenantId: id, budget: null }, request, reply);
    return this.after(id, outcome.events.map((e) => e.type));
  }

  @Post(':id/suspend')
  @HttpCode(200)
  async suspend(@Param('id') id: string, @Body() body: ReasonDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(TenantCommand, { type: 'SuspendTenant', tenantId: id, reason: body.reason ?? null }, request, reply);
    return this.after(id, outcome.events.map((e) => e.type));
  }

  @Post(':id/reinstate')
  @HttpCode(200)
  async reinstate(@Param('id') id: string, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(TenantCommand, { type: 'ReinstateTenant', tenantId: id }, request, reply);
    return this.after(id, outcome.events.map((e) => e.type));
  }

  private async after(id: string, appended: string[]) {
    const tenant = this.keys.state.tenants.get(id)!;
    return { ...this.view(id, tenant, (await this.spend.current([id])).get(id)!), appended };
  }

  private view(id: string, tenant: TenantState, spend: CurrentSpend) {
    if (tenant.status === 'absent') throw new AdminApiError(404, 'tenant_not_found', `Tenant ${id} does not exist.`);
    // The monthly amount when there is one, else the daily one.
    const budget = tenant.budget;
    const [spent, amount] = budget?.monthlyUsd ? [spend.month.spentUsd, budget.monthlyUsd] : [spend.day.spentUsd, budget?.dailyUsd];
    const budgetUsedPct = amount ? Number(new Decimal(spent).div(amount).times(100).toDecimalPlaces(2).toString()) : null;
    return {
      id,
      name: tenant.name,
      status: tenant.status,
      limits: tenant.limits,
      budget: tenant.budget,
      spend: { ...spend, budgetUsedPct },
      version: this.keys.state.versions.get(tenantStream(id)) ?? 0,
    };
  }
}
