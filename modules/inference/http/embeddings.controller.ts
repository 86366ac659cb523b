import { Controller, Logger, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../canonical/index.js';
import { openAiClientFormat } from '../formats/openai/openai-client-format.js';
import { EmbeddingsPipeline } from '../pipeline/embeddings-pipeline.js';
import { internalError, respondWithError } from './respond-with-error.js';

/** OpenAI Embeddings: `POST /v1/embeddings`, errors in the OpenAI envelope. */
@Controller('v1')
export class EmbeddingsController {
  private readonly logger = new Logger('Embeddings');

  constructor(private readonly pipeline: EmbeddingsPipeline) {}

  @Post('embeddings')
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    reply.hijack();
    try {
      await this.pipeline.handle({ requestId: request.id, headers: request.headers, body: request.body, raw: reply.raw });
    } catch (error) {
      if (!(error instanceof GatewayError)) this.logger.error(`request ${request.id} failed: ${(error as Error).stack ?? error}`);
      respondWithError(reply.raw, openAiClientFormat, error instanceof GatewayError ? error : internalError(), request.id);
    }
  }
}
