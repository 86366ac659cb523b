import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiKeyStream } from '../../../events/index.js';
import { KeyIndexProjection } from '../../../projections/key-index/key-index.projection.js';
import { randomBase62 } from '../../../src/kernel/index.js';
import { ApiKeyCommand } from '../access.commands.js';
import type { ApiKeyState } from '../api-key/api-key.decider.js';
import { displayPrefix, generateApiKey, hashApiKey } from '../api-key/key-format.js';
import { AdminApiError, AdminCommands, AdminExceptionFilter, AdminGuard, adminValidationPipe, etag, limitsOf, ReasonDto } from '../../admin/index.js';
import { IssueKeyDto } from './key.dto.js';

/**
 * `/admin/v1/keys`: issue (the plaintext key is in that one response and nowhere else, ever), revoke,
 * and reads that show the display prefix, never the key or its hash.
 */
@Controller('admin/v1/keys')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminValidationPipe())
export class KeysController {
  constructor(
    private readonly commands: AdminCommands,
    private readonly keys: KeyIndexProjection,
  ) {}

  @Get()
  async list(@Query('tenant') tenant: string | undefined) {
    await this.commands.fresh();
    const now = Date.now();
    const keys = [...this.keys.state.keys.entries()]
      .filter(([, key]) => key.status !== 'absent' && (!tenant || key.grant.tenantId === tenant));
    return { data: keys.map(([id, key]) => this.view(id, key, now)) };
  }

  @Get(':id')
  async one(@Param('id') id: string, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.commands.fresh();
    const key = this.keys.state.keys.get(id);
    if (!key || key.status === 'absent') throw new AdminApiError(404, 'key_not_found', `Key ${id} does not exist.`);
    const view = this.view(id, key, Date.now());
    reply.header('etag', etag(view.version));
    return view;
  }

  @Post()
  async issue(@Body() body: IssueKeyDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const keyId = body.id ?? `key-${randomBase62(12)}`;
    const key = generateApiKey();
    const grant = {
      tenantId: body.tenant,
      scopes: body.scopes ?? ['inference', 'models:read'],
      aliases: body.aliases ?? [],
      limits: limitsOf(body.limits),
      expiresAt: body.expiresAt ? new Date(body.expiresAt).toISOString() : null,
    };
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

  @Post(':id/revoke')
  @HttpCode(200)
  async revoke(@Param('id') id: string, @Body() body: ReasonDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const outcome = await this.commands.send(ApiKeyCommand, { type: 'RevokeApiKey', keyId: id, reason: body.reason ?? null }, request, reply);
    return { ...this.view(id, this.keys.state.keys.get(id)!, Date.now()), appended: outcome.events.map((e) => e.type) };
  }

  private view(id: string, key: ApiKeyState, now: number) {
    if (key.status === 'absent') throw new AdminApiError(404, 'key_not_found', `Key ${id} does not exist.`);
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
      expiresAt: key.grant.expiresAt,
      version: this.keys.state.versions.get(apiKeyStream(id)) ?? 0,
    };
  }
}
