import { Body, Controller, Delete, Get, Param, Post, Put, Query, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/index.js';
import { AdminArea, AdminApiError, AdminCommands, AdminExceptionFilter, AdminGuard, AdminTokenOnly, adminValidationPipe, etag, pageOfIds, readListPage } from '../../admin/index.js';
import { ProviderCommand } from '../catalog.commands.js';
import { providerView } from './catalog-views.js';
import { ProviderSettingsDto, RegisterProviderDto, providerSettingsOf } from './provider.dto.js';

/**
 * `/admin/v1/providers`: register, update, remove; reads show credential references, never credentials.
 * Registering and updating (credential references, base URLs) take the admin token only.
 */
@AdminArea('providers')
@Controller('admin/v1/providers')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminValidationPipe())
export class ProvidersController {
  constructor(
    private readonly commands: AdminCommands,
    private readonly routing: RoutingSnapshotProjection,
  ) {}

  /** In id order; `?limit=&pageToken=` pages it. */
  @Get()
  async list(@Query('limit') limit: unknown, @Query('pageToken') pageToken: unknown) {
    const paging = readListPage(limit, pageToken);
    await this.commands.fresh();
    const state = this.routing.state;
    const page = pageOfIds([...state.providers.entries()].filter(([, p]) => p.status !== 'absent').map(([id]) => id), paging);
    return { data: page.ids.map((id) => providerView(state, id)!), nextPageToken: page.nextPageToken };
  }

  @Get(':id')
  async one(@Param('id') id: string, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.commands.fresh();
    const view = this.found(id);
    reply.header('etag', etag(view.version));
    return view;
  }

  @Post()
  @AdminTokenOnly()
  async register(@Body() body: RegisterProviderDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(
      ProviderCommand, { type: 'RegisterProvider', providerId: body.id, settings: providerSettingsOf(body) }, request, reply,
    );
    reply.status(outcome.events.length ? 201 : 200);
    return { ...this.found(body.id), appended: outcome.events.map((e) => e.type) };
  }

  @Put(':id')
  @AdminTokenOnly()
  async update(@Param('id') id: string, @Body() body: ProviderSettingsDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(ProviderCommand, { type: 'UpdateProvider', providerId: id, settings: providerSettingsOf(body) }, request, reply);
    return { ...this.found(id), appended: outcome.events.map((e) => e.type) };
  }

  @Delete(':id')
  async remove(@Param('id') id: string, @Query('reason') reason: string | undefined, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(ProviderCommand, { type: 'RemoveProvider', providerId: id, reason: reason ?? null }, request, reply);
    return { ...this.found(id), appended: outcome.events.map((e) => e.type) };
  }

  private found(id: string) {
    const view = providerView(this.routing.state, id);
    if (!view) throw new AdminApiError(404, 'provider_not_found', `Provider ${id} does not exist.`);
    return view;
  }
}
