import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { aliasStream, type DomainEvent } from '../../../events/index.js';
import { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/index.js';
import { WrongExpectedVersionError } from '../../../src/kernel/index.js';
import { AdminArea, AdminApiError, AdminCommands, AdminExceptionFilter, AdminGuard, adminValidationPipe, etag, ifMatch, pageOfIds, ReasonDto, readListPage } from '../../admin/index.js';
import { aliasDecider } from '../alias/alias.decider.js';
import { AliasCommand } from '../catalog.commands.js';
import { assertSafeCatalogChange } from '../publication-guard.js';
import { AliasDryRunQueryDto, PublishAliasDto, aliasDefinitionOf } from './alias.dto.js';
import { aliasDefinitionView, aliasView } from './catalog-views.js';

/**
 * `/admin/v1/aliases`: publish a new version (checked by safe publication before it is appended) and
 * retire; reads show the declared version and the version this node serves, with resolved routes.
 * `PUT …?dryRun=true` answers what the publish would append and the version it would declare, decided and
 * checked as the real one is, and appends nothing (the console shows it as a diff before applying).
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

  /** In name order; `?limit=&pageToken=` pages it. */
  @Get()
  async list(@Query('limit') limit: unknown, @Query('pageToken') pageToken: unknown) {
    const paging = readListPage(limit, pageToken);
    await this.commands.fresh();
    const listed = [...this.routing.state.aliases.entries()].filter(([, alias]) => alias.status !== 'absent').map(([name]) => name);
    const page = pageOfIds(listed, paging);
    return { data: page.ids.map((name) => this.found(name)), nextPageToken: page.nextPageToken };
  }

  @Get(':name')
  async one(@Param('name') name: string, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.commands.fresh();
    const view = this.found(name);
    reply.header('etag', etag(view.version));
    return view;
  }

  @Put(':name')
  async publish(
    @Param('name') name: string, @Body() body: PublishAliasDto, @Query() query: AliasDryRunQueryDto,
    @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    if (query.dryRun === 'true') return this.dryRun(name, body, request);
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

  /** The publish decided by the aggregate and checked by the publication guard's rules, without appending. */
  private async dryRun(name: string, body: PublishAliasDto, request: FastifyRequest) {
    await this.commands.fresh();
    const state = this.routing.state;
    const stream = aliasStream(name);
    const version = state.versions.get(stream) ?? 0;
    const expected = ifMatch(request);
    if (expected !== undefined && expected !== version) throw new WrongExpectedVersionError(stream, expected, version);
    const definition = aliasDefinitionOf(body);
    const current = state.aliases.get(name) ?? aliasDecider.initialState();
    const events: DomainEvent[] = aliasDecider.decide({ type: 'PublishAlias', alias: name, definition }, current, { now: new Date(), actor: 'dry-run' });
    // The content-policy rules of the guard live in access, above catalog: the real publish still runs them.
    if (events.length) assertSafeCatalogChange(state, stream, events);
    const declared = current.status === 'absent' ? null : current.version;
    return {
      dryRun: true,
      wouldAppend: events.map((e) => e.type),
      current: this.view(name),
      proposed: aliasDefinitionView(definition, events.length ? (declared ?? 0) + 1 : (declared ?? 0)),
    };
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
