import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ApiKeyState, apiKeyStream, type KeyGrant } from '../../../events/index.js';
import { KeyIndexProjection } from '../../../projections/key-index/index.js';
import { randomBase62 } from '../../../src/kernel/index.js';
import { ApiKeyCommand } from '../access.commands.js';
import { type ApiKeyDefinition, grantOf, type KeyGrantMembers, readApiKey, readKeyChanges } from '../api-key/api-key-definition.js';
import { displayPrefix, generateApiKey, hashApiKey } from '../api-key/key-format.js';
import {
  AdminApiError, AdminArea, AdminCommands, AdminExceptionFilter, AdminGuard, type AdminPrincipal, adminValidationPipe, definitionBody, etag, pageOfIds, principalOf, ReasonDto,
  readListPage, TenantScoped,
} from '../../admin/index.js';
import { RotateKeyDto } from './key.dto.js';
import { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/index.js';
import { SpendHistory } from './spend-history.js';
import { SpendQueryDto } from './spend.dto.js';

const issue = definitionBody((reader, body) => readApiKey(reader, body, '', 'api'));
const changes = definitionBody((reader, body) => readKeyChanges(reader, body));

/**
 * `/admin/v1/keys`: issue (the plaintext key is in that one response and nowhere else, ever), revoke,
 * and reads that show the display prefix, never the key or its hash. A tenant admin sees and changes the
 * keys of its own tenant only (another tenant's key is 404, as a key that does not exist), and only keys
 * whose grant lies within its own: it never issues, widens, rotates or revokes a key stronger than itself.
 * Issue and update bodies are in the configuration file's shape, read by the file's readers
 * (api-key-definition.ts); the file names the secret, the API generates it.
 */
@AdminArea('access')
@Controller('admin/v1/keys')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminValidationPipe())
export class KeysController {
  constructor(
    private readonly commands: AdminCommands,
    private readonly keys: KeyIndexProjection,
    private readonly history: SpendHistory,
    private readonly routing: RoutingSnapshotProjection,
  ) {}

  /** In id order; `?limit=&pageToken=` pages it (a console must not download 10,000 keys to show 50). */
  @Get()
  @TenantScoped()
  async list(
    @Query('tenant') requested: string | undefined, @Query('limit') limit: unknown, @Query('pageToken') pageToken: unknown, @Req() request: FastifyRequest,
  ) {
    const paging = readListPage(limit, pageToken);
    const tenant = principalOf(request).confine(requested || undefined);
    await this.commands.fresh();
    const now = Date.now();
    const keys = this.keys.state.keys;
    const listed = [...keys.entries()].filter(([, key]) => key.status !== 'absent' && (!tenant || key.grant.tenantId === tenant)).map(([id]) => id);
    const page = pageOfIds(listed, paging);
    return { data: page.ids.map((id) => this.view(id, keys.get(id)!, now)), nextPageToken: page.nextPageToken };
  }

  @Get(':id')
  @TenantScoped()
  async one(@Param('id') id: string, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.commands.fresh();
    const key = this.found(id, principalOf(request));
    const view = this.view(id, key, Date.now());
    reply.header('etag', etag(view.version));
    return view;
  }

  /** Spend by period (`?period=day|month&from=&to=`), with the budget it counts against. */
  @Get(':id/spend')
  @AdminArea('analytics')
  @TenantScoped()
  async spendByPeriod(@Param('id') id: string, @Query() query: SpendQueryDto, @Req() request: FastifyRequest) {
    await this.commands.fresh();
    const found = this.found(id, principalOf(request));
    const period = query.period ?? 'month';
    const data = await this.history.of('key', id, period, query.from ? new Date(query.from) : null, query.to ? new Date(query.to) : null);
    return { key: id, period, budget: found.grant.budget ?? null, data };
  }

  @Post()
  @TenantScoped()
  async issue(@Body(issue) body: ApiKeyDefinition, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const principal = principalOf(request);
    principal.requireTenant(body.tenant);
    const keyId = body.id ?? `key-${randomBase62(12)}`;
    const key = generateApiKey();
    const grant = grantOf(body.tenant, body);
    this.requireGrantable(principal, grant, 'issue a key with');
    if (grant.contentPolicy && !principal.isPlatform) {
      throw new AdminApiError(403, 'grant_not_allowed', 'Only the platform attaches a content policy to a key; issue it without contentPolicy (the tenant\'s policy applies to it).');
    }
    this.requirePublished(grant.aliases);
    const outcome = await this.commands.send(
      ApiKeyCommand, { type: 'IssueApiKey', keyId, hash: hashApiKey(key), prefix: displayPrefix(key), grant }, request, reply,
    );
    reply.status(201).header('cache-control', 'no-store');
    return {
      ...this.view(keyId, this.keys.state.keys.get(keyId)!, Date.now()),
      key,
      notice: 'This is the only time the key is shown. Store it now; Switchyard keeps only its hash.',
      appended: outcome.events.map((e) => e.type),
    };
  }

  /**
   * Widens or narrows the grant (aliases, scopes, limits, budget, expiry) of a key without a new secret:
   * members sent replace the key's, `null` puts one back to the file's default.
   */
  @Patch(':id')
  @TenantScoped()
  async update(@Param('id') id: string, @Body(changes) body: Partial<KeyGrantMembers>, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.commands.fresh();
    const principal = principalOf(request);
    const key = this.held(id, principal, 'change');
    // A key's content policy protects its tenant's data: only the platform attaches or detaches it.
    if (body.contentPolicy !== undefined && !principal.isPlatform && (body.contentPolicy ?? null) !== (key.grant.contentPolicy ?? null)) {
      throw new AdminApiError(403, 'grant_not_allowed', `Only the platform changes the content policy of key ${id}.`);
    }
    const { tenantId, budget, contentPolicy, ...kept } = key.grant;
    const grant = grantOf(tenantId, { ...kept, budget: budget ?? null, contentPolicy: contentPolicy ?? null, ...body });
    this.requireGrantable(principal, grant, 'give a key');
    this.requirePublished(grant.aliases);
    const outcome = await this.commands.send(ApiKeyCommand, { type: 'UpdateApiKey', keyId: id, grant }, request, reply);
    return { ...this.view(id, this.keys.state.keys.get(id)!, Date.now()), appended: outcome.events.map((e) => e.type) };
  }

  /** A new secret for the key (shown once); the previous one keeps working for `overlapSeconds`. */
  @Post(':id/rotate')
  @TenantScoped()
  @HttpCode(200)
  async rotate(@Param('id') id: string, @Body() body: RotateKeyDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.admitChange(id, principalOf(request), 'rotate');
    const key = generateApiKey();
    const overlapUntil = body.overlapSeconds ? new Date(Date.now() + body.overlapSeconds * 1000).toISOString() : null;
    const outcome = await this.commands.send(
      ApiKeyCommand, { type: 'RotateApiKeySecret', keyId: id, hash: hashApiKey(key), prefix: displayPrefix(key), overlapUntil }, request, reply,
    );
    reply.header('cache-control', 'no-store');
    return {
      ...this.view(id, this.keys.state.keys.get(id)!, Date.now()),
      key,
      previousValidUntil: overlapUntil,
      notice: 'This is the only time the new secret is shown. Store it now; Switchyard keeps only its hash.',
      appended: outcome.events.map((e) => e.type),
    };
  }

  @Post(':id/revoke')
  @TenantScoped()
  @HttpCode(200)
  async revoke(@Param('id') id: string, @Body() body: ReasonDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.admitChange(id, principalOf(request), 'revoke');
    const outcome = await this.commands.send(ApiKeyCommand, { type: 'RevokeApiKey', keyId: id, reason: body.reason ?? null }, request, reply);
    return { ...this.view(id, this.keys.state.keys.get(id)!, Date.now()), appended: outcome.events.map((e) => e.type) };
  }

  /**
   * The key, if it exists and lies within the principal's reach: another tenant's key is the same 404 as
   * a key that never existed (same code, same message), so key ids of other tenants cannot be probed.
   */
  private found(id: string, principal: AdminPrincipal): Exclude<ApiKeyState, { status: 'absent' }> {
    const key = this.keys.state.keys.get(id);
    if (!key || key.status === 'absent' || !principal.reaches(key.grant.tenantId)) throw keyNotFound(id);
    return key;
  }

  /** A key the principal may change: within its reach, and with no scope or alias beyond the principal's own. */
  private held(id: string, principal: AdminPrincipal, verb: string): Exclude<ApiKeyState, { status: 'absent' }> {
    const key = this.found(id, principal);
    const excess = principal.grantExcess(key.grant.scopes, key.grant.aliases);
    if (excess) throw new AdminApiError(403, 'grant_not_allowed', `Key ${id} holds ${excess}, beyond this key's own grant; only a key holding them (or the platform) may ${verb} it.`);
    return key;
  }

  /**
   * Rotate and revoke of a platform principal go straight to the aggregate (which answers for a missing
   * key as before); a tenant admin's are checked against its reach and grant first.
   */
  private async admitChange(id: string, principal: AdminPrincipal, verb: string): Promise<void> {
    if (principal.isPlatform) return;
    await this.commands.fresh();
    this.held(id, principal, verb);
  }

  /** A tenant admin hands out only what it holds itself: its scopes (never admin:platform) and its aliases. */
  private requireGrantable(principal: AdminPrincipal, grant: KeyGrant, verb: string): void {
    const excess = principal.grantExcess(grant.scopes, grant.aliases);
    if (excess) throw new AdminApiError(403, 'grant_not_allowed', `This key cannot ${verb} ${excess}: a key grants only scopes and aliases it holds itself.`);
  }

  /** Issuing or widening a key for an alias that does not exist is refused, naming it. */
  private requirePublished(aliases: readonly string[]): void {
    const state = this.routing.state;
    const unknown = aliases.filter((alias) => state.aliases.get(alias)?.status !== 'published');
    if (unknown.length) {
      throw new AdminApiError(422, 'unknown_alias', `No published alias ${unknown.map((a) => `'${a}'`).join(', ')}; publish it first or correct the name.`);
    }
  }

  private view(id: string, key: ApiKeyState, now: number) {
    if (key.status === 'absent') throw keyNotFound(id);
    // Auth refuses a key the moment it expires; the ApiKeyExpired event follows from the sweeper.
    const due = key.status === 'active' && key.grant.expiresAt !== null && Date.parse(key.grant.expiresAt) <= now;
    return {
      id,
      tenant: key.grant.tenantId,
      prefix: key.prefix,
      status: due ? 'expired' : key.status,
      scopes: key.grant.scopes,
      aliases: key.grant.aliases,
      limits: key.grant.limits,
      budget: key.grant.budget ?? null,
      contentPolicy: key.grant.contentPolicy ?? null,
      expiresAt: key.grant.expiresAt,
      previousSecretValidUntil: key.previous?.validUntil ?? null,
      version: this.keys.state.versions.get(apiKeyStream(id)) ?? 0,
    };
  }
}

function keyNotFound(id: string): AdminApiError {
  return new AdminApiError(404, 'key_not_found', `Key ${id} does not exist.`);
}
