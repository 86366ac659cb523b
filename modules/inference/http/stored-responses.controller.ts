import { Controller, Delete, Get, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayAuthenticator } from '../../access/index.js';
import { GatewayError } from '../../canonical/index.js';
import { responsesClientFormat } from '../formats/responses/responses-client-format.js';
import { respondWithError } from './respond-with-error.js';

/**
 * The Responses API's stored-response routes (retrieve, delete, cancel, input items). Switchyard stores
 * no responses, so each is a 404 that says why, in OpenAI's envelope, rather than an unknown route.
 */
@Controller('v1/responses')
export class StoredResponsesController {
  constructor(private readonly auth: GatewayAuthenticator) {}

  @Get(':id')
  retrieve(@Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    this.notStored(id, request, reply);
  }

  @Delete(':id')
  remove(@Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    this.notStored(id, request, reply);
  }

  @Post(':id/cancel')
  cancel(@Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    this.notStored(id, request, reply);
  }

  @Get(':id/input_items')
  inputItems(@Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    this.notStored(id, request, reply);
  }

  private notStored(id: string, request: FastifyRequest, reply: FastifyReply): void {
    reply.hijack();
    try {
      this.auth.authenticate(request.headers, 'inference');
      throw new GatewayError(
        404,
        'response_not_found',
        `No response '${id.slice(0, 64)}' is stored: Switchyard keeps no responses (store is always false). Keep what you need from the answer itself.`,
        'response_id',
      );
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      respondWithError(reply.raw, responsesClientFormat, error, request.id);
    }
  }
}
