import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayAuthenticator } from '../../access/index.js';
import { GatewayError } from '../../canonical/index.js';
import type { Principal } from '../../../projections/key-index/index.js';
import { type ResolvedAlias, RoutingSnapshotProjection } from '../../../projections/routing-snapshot/index.js';
import { listedFor, modelNotFound } from '../pipeline/callable-alias.js';
import { anthropicClientFormat } from '../formats/anthropic/anthropic-client-format.js';
import { openAiClientFormat } from '../formats/openai/openai-client-format.js';
import { respondWithError } from './respond-with-error.js';

/**
 * `GET /v1/models`: the aliases this key may use whose visibility is public, in OpenAI list format, or
 * in the Anthropic Models API shape (`{data: [{type: "model", id, display_name, created_at}], has_more,
 * first_id, last_id}`, paged by `limit`/`after_id`/`before_id`) when the request carries
 * `anthropic-version`, as Anthropic's SDKs always send. Deployments, providers and base URLs never appear.
 */
@Controller('v1/models')
export class ModelsController {
  constructor(
    private readonly auth: GatewayAuthenticator,
    private readonly routing: RoutingSnapshotProjection,
  ) {}

  @Get()
  list(@Query() query: Record<string, unknown>, @Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    this.answer(request, reply, (principal) => {
      const listed = [...this.routing.current.aliases.values()].filter((alias) => listedFor(principal, alias));
      if (isAnthropic(request)) return anthropicPage(listed.map(toAnthropicModel), query);
      return { object: 'list', data: listed.map(toModel) };
    });
  }

  @Get(':id')
  one(@Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    this.answer(request, reply, (principal) => {
      const alias = this.routing.current.aliases.get(id);
      if (!alias || !listedFor(principal, alias)) throw modelNotFound(id);
      return isAnthropic(request) ? toAnthropicModel(alias) : toModel(alias);
    });
  }

  private answer(request: FastifyRequest, reply: FastifyReply, build: (principal: Principal) => unknown): void {
    try {
      const principal = this.auth.authenticate(request.headers, 'models:read');
      reply.header('x-request-id', request.id).send(build(principal));
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      reply.hijack();
      respondWithError(reply.raw, isAnthropic(request) ? anthropicClientFormat : openAiClientFormat, error, request.id);
    }
  }
}

function isAnthropic(request: FastifyRequest): boolean {
  return typeof request.headers['anthropic-version'] === 'string';
}

function toModel(alias: ResolvedAlias) {
  return { id: alias.name, object: 'model', created: 0, owned_by: 'switchyard' };
}

/** An alias has no release date; the epoch says so, as `created: 0` does in the OpenAI shape. */
function toAnthropicModel(alias: ResolvedAlias) {
  return { type: 'model', id: alias.name, display_name: alias.name, created_at: '1970-01-01T00:00:00Z' };
}

type AnthropicModel = ReturnType<typeof toAnthropicModel>;

/** Anthropic's cursor paging: `limit` (1–1000, default 20), then `after_id` or `before_id` an id of the list. */
function anthropicPage(models: AnthropicModel[], query: Record<string, unknown>) {
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new GatewayError(400, 'invalid_request', 'limit: must be an integer from 1 to 1000.', 'limit');
  const cursor = (name: 'after_id' | 'before_id'): number | null => {
    const id = query[name];
    if (id === undefined) return null;
    const index = models.findIndex((m) => m.id === id);
    if (index < 0) throw new GatewayError(400, 'invalid_request', `${name}: '${String(id)}' is not a model of this list.`, name);
    return index;
  };
  const after = cursor('after_id');
  const before = cursor('before_id');
  let page: AnthropicModel[];
  let hasMore: boolean;
  if (before !== null) {
    const start = Math.max(0, before - limit);
    page = models.slice(start, before);
    hasMore = start > 0;
  } else {
    const start = after === null ? 0 : after + 1;
    page = models.slice(start, start + limit);
    hasMore = start + limit < models.length;
  }
  return { data: page, has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page[page.length - 1]?.id ?? null };
}
