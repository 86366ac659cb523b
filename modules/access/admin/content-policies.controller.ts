import { Body, Controller, Delete, Get, Param, Put, Query, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ContentPolicyDefinition, type ContentPolicyState, contentPolicyStream, type DomainEvent } from '../../../events/index.js';
import { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/index.js';
import { AdminArea, AdminApiError, AdminCommands, AdminExceptionFilter, AdminGuard, adminValidationPipe, definitionBody, etag, ifMatch, pageOfIds, queryProblem, readListPage } from '../../admin/index.js';
import { ContentPolicyCommand } from '../access.commands.js';
import { readContentPolicyDefinition } from '../content-policy/content-policy-definition.js';
import { type ContentPolicyCommand as PolicyCommand, contentPolicyDecider } from '../content-policy/content-policy.decider.js';
import { assertContentPolicyChange, assertModerationAlias } from '../content-policy/content-policy-guard.js';
import { contentPolicyView } from '../content-policy/content-policy-view.js';
import { WrongExpectedVersionError } from '../../../src/kernel/index.js';
import { ContentPoliciesQueryDto, DryRunQueryDto } from './content-policy.dto.js';

/** The page size without `limit`, and the largest `limit`: this list paged before the other admin lists did. */
const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;

const definition = definitionBody((reader, body) => readContentPolicyDefinition(reader, body, ''));

/**
 * `/admin/v1/content-policies` (platform only): define or change a policy (`PUT`, a new version only when
 * the definition changes), retire it (`DELETE`; 409 naming the tenants, keys and aliases still attached),
 * and read them with where each is attached. Bodies are the configuration file's `contentPolicies[]` shape,
 * read by the file's reader. `?dryRun=true` on a write answers what would be appended and appends nothing.
 */
@AdminArea('content-policies')
@Controller('admin/v1/content-policies')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminValidationPipe())
export class ContentPoliciesController {
  constructor(
    private readonly commands: AdminCommands,
    private readonly routing: RoutingSnapshotProjection,
  ) {}

  @Get()
  async list(@Query() query: ContentPoliciesQueryDto) {
    const paging = readListPage(query.limit, query.pageToken, { maxLimit: MAX_PAGE, defaultLimit: DEFAULT_PAGE });
    if (query.after !== undefined && paging.after !== null) throw queryProblem('pageToken', 'cannot be combined with after (send one of them)');
    await this.commands.fresh();
    const status = query.status ?? 'live';
    const listed = [...this.routing.state.contentPolicies.entries()]
      .filter(([, policy]) => policy.status !== 'absent' && (status === 'all' || policy.status === status))
      .map(([id]) => id);
    const page = pageOfIds(listed, { ...paging, after: paging.after ?? query.after ?? null });
    return { data: page.ids.map((id) => this.found(id)), next: page.nextPageToken === null ? null : page.ids.at(-1)!, nextPageToken: page.nextPageToken };
  }

  @Get(':id')
  async one(@Param('id') id: string, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.commands.fresh();
    const view = this.found(id);
    reply.header('etag', etag(view.streamVersion));
    return view;
  }

  @Put(':id')
  async define(
    @Param('id') id: string, @Body(definition) body: ContentPolicyDefinition, @Query() query: DryRunQueryDto,
    @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const command: PolicyCommand = { type: 'DefineContentPolicy', policyId: id, definition: body };
    await this.commands.fresh();
    assertModerationAlias(this.routing.state, id, body);
    if (query.dryRun === 'true') return this.dryRun(command, request);
    const outcome = await this.commands.send(ContentPolicyCommand, command, request, reply);
    if (outcome.events.some((e) => e.type === 'ContentPolicyDefined')) reply.status(201);
    return { ...this.found(id), appended: outcome.events.map((e) => e.type) };
  }

  @Delete(':id')
  async retire(@Param('id') id: string, @Query() query: DryRunQueryDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const command: PolicyCommand = { type: 'RetireContentPolicy', policyId: id };
    if (query.dryRun === 'true') return this.dryRun(command, request);
    const outcome = await this.commands.send(ContentPolicyCommand, command, request, reply);
    return { ...this.found(id), appended: outcome.events.map((e) => e.type) };
  }

  /** What the command would append, decided and checked as a real one is (aggregate, then the guard's rules), without appending. */
  private async dryRun(command: PolicyCommand, request: FastifyRequest) {
    await this.commands.fresh();
    const state = this.routing.state;
    const stream = contentPolicyStream(command.policyId);
    const version = state.versions.get(stream) ?? 0;
    const expected = ifMatch(request);
    if (expected !== undefined && expected !== version) throw new WrongExpectedVersionError(stream, expected, version);
    const current = state.contentPolicies.get(command.policyId) ?? contentPolicyDecider.initialState();
    const events: DomainEvent[] = contentPolicyDecider.decide(command, current, { now: new Date(), actor: 'dry-run' });
    assertContentPolicyChange(state, events, process.env);
    const after = events.reduce((policy, event) => contentPolicyDecider.evolve(policy, event as never), current);
    return { dryRun: true, wouldAppend: events.map((e) => e.type), policy: after.status === 'absent' ? null : this.view(command.policyId, after, version + events.length) };
  }

  private found(id: string) {
    const policy = this.routing.state.contentPolicies.get(id);
    if (!policy || policy.status === 'absent') throw new AdminApiError(404, 'content_policy_not_found', `Content policy ${id} does not exist.`);
    return this.view(id, policy, this.routing.state.versions.get(contentPolicyStream(id)) ?? 0);
  }

  private view(id: string, policy: Exclude<ContentPolicyState, { status: 'absent' }>, streamVersion: number) {
    return contentPolicyView(this.routing.state, id, policy, streamVersion);
  }
}
