import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayAuthenticator } from '../../access/index.js';
import { GatewayError } from '../../canonical/index.js';
import type { Principal } from '../../../projections/key-index/principal.js';
import type { ResolvedAlias } from '../../../projections/routing-snapshot/routing-snapshot.js';
import { listedFor, modelNotFound } from '../pipeline/callable-alias.js';
import { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/routing-snapshot.projection.js';
import { openAiClientFormat } from '../formats/openai/openai-client-format.js';
import { respondWithError } from './respond-with-error.js';

/**
 * `GET /v1/models`: the aliases this key may use whose visibility is public, in OpenAI list format.
 * Deployments, providers and base URLs never appear.
 */
@Controller('v1/models')
export class ModelsController {
  constructor(
    private readonly auth: GatewayAuthenticator,
    private readonly routing: RoutingSnapshotProjection,
  ) {}

  @Get()
  list(@Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    this.answer(request, reply, (principal) => ({
      object: 'list',
      data: [...this.routing.current.aliases.values()].filter((alias) => listedFor(principal, alias)).map(toModel),
    }));
  }

  @Get(':id')
  one(@Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    this.answer(request, reply, (principal) => {
      const alias = this.routing.current.aliases.get(id);
      if (!alias || !listedFor(principal, alias)) throw modelNotFound(id);
      return toModel(alias);
    });
  }

  private answer(request: FastifyRequest, reply: FastifyReply, build: (principal: Principal) => unknown): void {
    try {
      const principal = this.auth.authenticate(request.headers, 'models:read');
      reply.header('x-request-id', request.id).send(build(principal));
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      reply.hijack();
      respondWithError(reply.raw, openAiClientFormat, error, request.id);
    }
  }
}

function toModel(alias: ResolvedAlias) {
  return { id: alias.name, object: 'model', created: 0, owned_by: 'switchyard' };
}
