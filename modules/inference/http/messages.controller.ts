import { Controller, Logger, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../canonical/index.js';
import { anthropicClientFormat } from '../formats/anthropic/anthropic-client-format.js';
import { ChatPipeline } from '../pipeline/chat-pipeline.js';
import { internalError, respondWithError } from './respond-with-error.js';

/** Anthropic Messages: `POST /v1/messages`, buffered and SSE, over the same pipeline as Chat Completions. */
@Controller('v1')
export class MessagesController {
  private readonly logger = new Logger('Messages');

  constructor(private readonly pipeline: ChatPipeline) {}

  @Post('messages')
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    reply.hijack();
    try {
      await this.pipeline.handle(
        { requestId: request.id, headers: request.headers, body: request.body, raw: reply.raw },
        anthropicClientFormat,
      );
    } catch (error) {
      if (!(error instanceof GatewayError)) this.logger.error(`request ${request.id} failed: ${(error as Error).stack ?? error}`);
      respondWithError(reply.raw, anthropicClientFormat, error instanceof GatewayError ? error : internalError(), request.id);
    }
  }
}
