import { Controller, Logger, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../canonical/index.js';
import { openAiClientFormat } from '../formats/openai/openai-client-format.js';
import { ChatPipeline } from '../pipeline/chat-pipeline.js';
import { internalError, respondWithError } from './respond-with-error.js';

/** OpenAI Chat Completions: `POST /v1/chat/completions`, buffered and SSE. */
@Controller('v1')
export class ChatCompletionsController {
  private readonly logger = new Logger('ChatCompletions');

  constructor(private readonly pipeline: ChatPipeline) {}

  @Post('chat/completions')
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    reply.hijack();
    try {
      await this.pipeline.handle(
        { requestId: request.id, headers: request.headers, body: request.body, raw: reply.raw },
        openAiClientFormat,
      );
    } catch (error) {
      if (!(error instanceof GatewayError)) this.logger.error(`request ${request.id} failed: ${(error as Error).stack ?? error}`);
      respondWithError(reply.raw, openAiClientFormat, error instanceof GatewayError ? error : internalError(), request.id);
    }
  }
}
