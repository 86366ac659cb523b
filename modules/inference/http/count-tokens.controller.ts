import { Controller, Logger, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../canonical/index.js';
import { anthropicClientFormat } from '../formats/anthropic/anthropic-client-format.js';
import { anthropicTokenCount } from '../formats/anthropic/anthropic-count-tokens-request.js';
import { TokenCountPipeline } from '../pipeline/token-count-pipeline.js';
import { internalError, respondWithError } from './respond-with-error.js';

/** Anthropic token counting: `POST /v1/messages/count_tokens`, errors in Anthropic's envelope. */
@Controller('v1')
export class CountTokensController {
  private readonly logger = new Logger('CountTokens');

  constructor(private readonly pipeline: TokenCountPipeline) {}

  @Post('messages/count_tokens')
  async count(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    reply.hijack();
    try {
      await this.pipeline.handle({ requestId: request.id, headers: request.headers, body: request.body, raw: reply.raw }, anthropicTokenCount);
    } catch (error) {
      if (!(error instanceof GatewayError)) this.logger.error(`request ${request.id} failed: ${(error as Error).stack ?? error}`);
      respondWithError(reply.raw, anthropicClientFormat, error instanceof GatewayError ? error : internalError(), request.id);
    }
  }
}
