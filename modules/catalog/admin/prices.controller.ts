import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/index.js';
import { AdminArea, AdminApiError, AdminCommands, AdminExceptionFilter, AdminGuard, adminValidationPipe, etag } from '../../admin/index.js';
import { PriceCommand } from '../catalog.commands.js';
import { priceHistoryView } from './catalog-views.js';
import { SchedulePriceDto, priceTableOf } from './price.dto.js';

/**
 * `/admin/v1/deployments/{id}/prices`: the full, never-edited history, and scheduling a new price. A future
 * price takes effect at its `effectiveFrom` on every node with no restart (admission picks it by time).
 */
@AdminArea('catalog')
@Controller('admin/v1/deployments/:id/prices')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminValidationPipe())
export class PricesController {
  constructor(
    private readonly commands: AdminCommands,
    private readonly routing: RoutingSnapshotProjection,
  ) {}

  @Get()
  async history(@Param('id') id: string, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.commands.fresh();
    const deployment = this.routing.state.deployments.get(id);
    if (!deployment || deployment.status === 'absent') throw new AdminApiError(404, 'deployment_not_found', `Deployment ${id} does not exist.`);
    const view = priceHistoryView(this.routing.state, id, new Date());
    reply.header('etag', etag(view.version));
    return view;
  }

  @Post()
  async schedule(@Param('id') id: string, @Body() body: SchedulePriceDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const effectiveFrom = body.effectiveFrom ? new Date(body.effectiveFrom) : new Date();
    const outcome = await this.commands.send(PriceCommand, { type: 'SchedulePrice', deploymentId: id, effectiveFrom, table: priceTableOf(body) }, request, reply);
    reply.status(outcome.events.length ? 201 : 200);
    return { ...priceHistoryView(this.routing.state, id, new Date()), appended: outcome.events.map((e) => e.type) };
  }
}
