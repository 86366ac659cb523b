import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import { Decimal } from 'decimal.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type TenantState, tenantStream } from '../../../events/index.js';
import { KeyIndexProjection } from '../../../projections/key-index/index.js';
import { TenantCommand } from '../access.commands.js';
import {
  AdminArea, AdminCommands, AdminExceptionFilter, AdminGuard, adminValidationPipe, definitionBody, etag, pageOfIds, PlatformOnlyOnTenant, principalOf, ReasonDto, readListPage,
  readLimitsMapping, TenantScoped, tenantNotFound,
} from '../../admin/index.js';
import type { TenantBudget, TenantLimits } from '../../../events/index.js';
import { readBudgetMapping, readTenant, type TenantDefinition } from '../tenant/tenant-definition.js';
import { readContentPolicyReference } from '../content-policy/content-policy-reference.js';
import { SpendHistory } from './spend-history.js';
import { SpendQueryDto } from './spend.dto.js';
import { type CurrentSpend, TenantSpendReader } from './tenant-spend-reader.js';

/** `POST` body: a tenant as the file declares it, and which of its optional members were sent. */
interface TenantCreation {
  tenant: TenantDefinition;
  sent: { limits: boolean; budget: boolean; contentPolicy: boolean };
}

const creation = definitionBody((reader, body): TenantCreation => ({
  tenant: readTenant(reader, body, ''),
  sent: { limits: body.limits !== undefined, budget: body.budget !== undefined, contentPolicy: body.contentPolicy !== undefined },
}));
const limitsBody = definitionBody((reader, body) => readLimitsMapping(reader, body, ''));
const budgetBody = definitionBody((reader, body) => readBudgetMapping(reader, body, ''));
const contentPolicyBody = definitionBody((reader, body) => {
  reader.known(body, '', ['contentPolicy']);
  const policyId = readContentPolicyReference(reader, body, '');
  if (policyId === null) reader.problem('contentPolicy', 'is required (a content policy id; DELETE detaches the policy)');
  return policyId ?? '';
});

/**
 * `/admin/v1/tenants`: create, limits, budget, suspend and reinstate; reads include current spend. Bodies
 * are in the configuration file's shape and read by the file's readers (tenant-definition.ts). A
 * tenant admin reads its own tenant only (every other tenant is 404, as one that does not exist); creating
 * tenants and setting a tenant's limits, budget and suspension are the platform's, even for its own.
 */
@AdminArea('access')
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

  /** In id order; `?limit=&pageToken=` pages it, and spend is read for the tenants of the page only. */
  @Get()
  @TenantScoped()
  async list(@Query('limit') limit: unknown, @Query('pageToken') pageToken: unknown, @Req() request: FastifyRequest) {
    const paging = readListPage(limit, pageToken);
    const only = principalOf(request).confine(undefined);
    await this.commands.fresh();
    const tenants = this.keys.state.tenants;
    const listed = [...tenants.entries()].filter(([id, t]) => t.status !== 'absent' && (only === null || id === only)).map(([id]) => id);
    const page = pageOfIds(listed, paging);
    const spend = await this.spend.current(page.ids);
    return { data: page.ids.map((id) => this.view(id, tenants.get(id)!, spend.get(id)!)), nextPageToken: page.nextPageToken };
  }

  @Get(':id')
  @TenantScoped()
  async one(@Param('id') id: string, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    principalOf(request).requireTenant(id);
    await this.commands.fresh();
    const tenant = this.keys.state.tenants.get(id);
    if (!tenant || tenant.status === 'absent') throw tenantNotFound(id);
    const view = this.view(id, tenant, (await this.spend.current([id])).get(id)!);
    reply.header('etag', etag(view.version));
    return view;
  }

  /** Spend by period (`?period=day|month&from=&to=`), with the budget it counts against. */
  @Get(':id/spend')
  @AdminArea('analytics')
  @TenantScoped()
  async spendByPeriod(@Param('id') id: string, @Query() query: SpendQueryDto, @Req() request: FastifyRequest) {
    principalOf(request).requireTenant(id);
    await this.commands.fresh();
    const found = this.keys.state.tenants.get(id);
    if (!found || found.status === 'absent') throw tenantNotFound(id);
    const period = query.period ?? 'month';
    const data = await this.history.of('tenant', id, period, query.from ? new Date(query.from) : null, query.to ? new Date(query.to) : null);
    return { tenant: id, period, budget: found.budget, data };
  }

  /** A tenant with its name, limits and budget in one append, as `apply` makes the same tenant declared in the file. */
  @Post()
  async create(@Body(creation) body: TenantCreation, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const { id, name, limits, budget, contentPolicy } = body.tenant;
    const outcome = await this.commands.send(
      TenantCommand,
      {
        type: 'CreateTenant', tenantId: id, name, ...(body.sent.limits ? { limits } : {}), ...(body.sent.budget ? { budget } : {}),
        ...(body.sent.contentPolicy ? { contentPolicy } : {}),
      },
      request, reply,
    );
    reply.status(outcome.events.length ? 201 : 200);
    return this.after(id, outcome.events.map((e) => e.type));
  }

  @Put(':id/limits')
  @AdminArea('limits')
  @PlatformOnlyOnTenant('id')
  async setLimits(@Param('id') id: string, @Body(limitsBody) limits: TenantLimits, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(TenantCommand, { type: 'SetTenantLimits', tenantId: id, limits }, request, reply);
    return this.after(id, outcome.events.map((e) => e.type));
  }

  @Put(':id/budget')
  @AdminArea('budgets')
  @PlatformOnlyOnTenant('id')
  async setBudget(@Param('id') id: string, @Body(budgetBody) budget: TenantBudget, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(TenantCommand, { type: 'SetTenantBudget', tenantId: id, budget }, request, reply);
    return this.after(id, outcome.events.map((e) => e.type));
  }

  @Delete(':id/budget')
  @AdminArea('budgets')
  @PlatformOnlyOnTenant('id')
  async clearBudget(@Param('id') id: string, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(TenantCommand, { type: 'SetTenantBudget', tenantId: id, budget: null }, request, reply);
    return this.after(id, outcome.events.map((e) => e.type));
  }

  /** Attaches a content policy (`{ "contentPolicy": "<id>" }`): it must be live (400 naming it otherwise). */
  @Put(':id/content-policy')
  @AdminArea('content-policies')
  @PlatformOnlyOnTenant('id')
  async setContentPolicy(@Param('id') id: string, @Body(contentPolicyBody) policyId: string, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(TenantCommand, { type: 'SetTenantContentPolicy', tenantId: id, policyId }, request, reply);
    return this.after(id, outcome.events.map((e) => e.type));
  }

  @Delete(':id/content-policy')
  @AdminArea('content-policies')
  @PlatformOnlyOnTenant('id')
  async clearContentPolicy(@Param('id') id: string, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(TenantCommand, { type: 'SetTenantContentPolicy', tenantId: id, policyId: null }, request, reply);
    return this.after(id, outcome.events.map((e) => e.type));
  }

  @Post(':id/suspend')
  @PlatformOnlyOnTenant('id')
  @HttpCode(200)
  async suspend(@Param('id') id: string, @Body() body: ReasonDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(TenantCommand, { type: 'SuspendTenant', tenantId: id, reason: body.reason ?? null }, request, reply);
    return this.after(id, outcome.events.map((e) => e.type));
  }

  @Post(':id/reinstate')
  @PlatformOnlyOnTenant('id')
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
    if (tenant.status === 'absent') throw tenantNotFound(id);
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
      contentPolicy: tenant.contentPolicy ?? null,
      spend: { ...spend, budgetUsedPct },
      version: this.keys.state.versions.get(tenantStream(id)) ?? 0,
    };
  }
}
