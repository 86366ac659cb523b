import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/index.js';
import { AdminArea, AdminApiError, AdminCommands, AdminExceptionFilter, AdminGuard, adminValidationPipe, etag, pageOfIds, ReasonDto, readListPage } from '../../admin/index.js';
import { DeploymentCommand } from '../catalog.commands.js';
import { deploymentView } from './catalog-views.js';
import { DeploymentSettingsDto, RegisterDeploymentDto, deploymentSettingsOf } from './deployment.dto.js';

/** `/admin/v1/deployments`: register, update, disable, enable, retire; reads include the price in effect. */
@AdminArea('catalog')
@Controller('admin/v1/deployments')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminValidationPipe())
export class DeploymentsController {
  constructor(
    private readonly commands: AdminCommands,
    private readonly routing: RoutingSnapshotProjection,
  ) {}

  /** In id order; `?limit=&pageToken=` pages it. */
  @Get()
  async list(@Query('limit') limit: unknown, @Query('pageToken') pageToken: unknown) {
    const paging = readListPage(limit, pageToken);
    await this.commands.fresh();
    const now = new Date();
    const state = this.routing.state;
    const page = pageOfIds([...state.deployments.entries()].filter(([, d]) => d.status !== 'absent').map(([id]) => id), paging);
    return { data: page.ids.map((id) => deploymentView(state, id, now)!), nextPageToken: page.nextPageToken };
  }

  @Get(':id')
  async one(@Param('id') id: string, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.commands.fresh();
    const view = this.found(id);
    reply.header('etag', etag(view.version));
    return view;
  }

  @Post()
  async register(@Body() body: RegisterDeploymentDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(
      DeploymentCommand, { type: 'RegisterDeployment', deploymentId: body.id, settings: deploymentSettingsOf(body) }, request, reply,
    );
    reply.status(outcome.events.length ? 201 : 200);
    return { ...this.found(body.id), appended: outcome.events.map((e) => e.type) };
  }

  @Put(':id')
  async update(@Param('id') id: string, @Body() body: DeploymentSettingsDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(
      DeploymentCommand, { type: 'UpdateDeployment', deploymentId: id, settings: deploymentSettingsOf(body) }, request, reply,
    );
    return { ...this.found(id), appended: outcome.events.map((e) => e.type) };
  }

  @Post(':id/disable')
  @HttpCode(200)
  async disable(@Param('id') id: string, @Body() body: ReasonDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(DeploymentCommand, { type: 'DisableDeployment', deploymentId: id, reason: body.reason ?? null }, request, reply);
    return { ...this.found(id), appended: outcome.events.map((e) => e.type) };
  }

  @Post(':id/enable')
  @HttpCode(200)
  async enable(@Param('id') id: string, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(DeploymentCommand, { type: 'EnableDeployment', deploymentId: id }, request, reply);
    return { ...this.found(id), appended: outcome.events.map((e) => e.type) };
  }

  @Post(':id/retire')
  @HttpCode(200)
  async retire(@Param('id') id: string, @Body() body: ReasonDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(DeploymentCommand, { type: 'RetireDeployment', deploymentId: id, reason: body.reason ?? null }, request, reply);
    return { ...this.found(id), appended: outcome.events.map((e) => e.type) };
  }

  private found(id: string) {
    const view = deploymentView(this.routing.state, id, new Date());
    if (!view) throw new AdminApiError(404, 'deployment_not_found', `Deployment ${id} does not exist.`);
    return view;
  }
}
