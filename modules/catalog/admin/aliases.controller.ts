import { Body, Controller, Get, HttpCode, Param, Post, Put, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/index.js';
import { AdminArea, AdminApiError, AdminCommands, AdminExceptionFilter, AdminGuard, adminValidationPipe, etag, ReasonDto } from '../../admin/index.js';
import { AliasCommand } from '../catalog.commands.js';
import { PublishAliasDto, aliasDefinitionOf } from './alias.dto.js';
import { aliasView } from './catalog-views.js';

/**
 * `/admin/v1/aliases`: publish a new version (checked by safe publication before it is appended) and
 * retire; reads show the declared version and the version this node serves, with resolved routes.
 */
@AdminArea('catalog')
@Controller('admin/v1/aliases')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminValidationPipe())
export class AliasesController {
  constructor(
    private readonly commands: AdminCommands,
    private readonly routing: RoutingSnapshotProjection,
  ) {}

  @Get()
  async list() {
    await this.commands.fresh();
    return { data: [...this.routing.state.aliases.keys()].map((name) => this.view(name)).filter((v) => v !== null) };
  }

  @Get(':name')
  async one(@Param('name') name: string, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.commands.fresh();
    const view = this.found(name);
    reply.header('etag', etag(view.version));
    return view;
  }

  @Put(':name')
  async publish(@Param('name') name: string, @Body() body: PublishAliasDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(AliasCommand, { type: 'PublishAlias', alias: name, definition: aliasDefinitionOf(body) }, request, reply);
    if (outcome.events.length && outcome.version === 1) reply.status(201);
    return { ...this.found(name), appended: outcome.events.map((e) => e.type) };
  }

  @Post(':name/retire')
  @HttpCode(200)
  async retire(@Param('name') name: string, @Body() body: ReasonDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(AliasCommand, { type: 'RetireAlias', alias: name, reason: body.reason ?? null }, request, reply);
    return { ...this.found(name), appended: outcome.events.map((e) => e.type) };
  }

  private view(name: string) {
    return aliasView(this.routing.state, this.routing.current, this.routing.problems, name);
  }

  private found(name: string) {
    const view = this.view(name);
    if (!view) throw new AdminApiError(404, 'alias_not_found', `Alias ${name} does not exist.`);
    return view;
  }
}
