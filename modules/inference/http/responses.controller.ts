import { Controller, Logger, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../canonical/index.js';
import { responsesClientFormat } from '../formats/responses/responses-client-format.js';
import { responsesInputTokens } from '../formats/responses/responses-input-tokens.js';
import { inResponsesTerms } from '../formats/responses/responses-parameter-names.js';
import { ChatPipeline } from '../pipeline/chat-pipeline.js';
import { TokenCountPipeline } from '../pipeline/token-count-pipeline.js';
import { internalError, respondWithError } from './respond-with-error.js';

/**
 * OpenAI Responses: `POST /v1/responses`, buffered and SSE, over the same pipeline as Chat Completions and
 * Messages; `POST /v1/responses/input_tokens` counts a response request's input.
 */
@Controller('v1')
export class ResponsesController {
  private readonly logger = new Logger('Responses');

  constructor(
    private readonly pipeline: ChatPipeline,
    private readonly counting: TokenCountPipeline,
  ) {}

  @Post('responses')
  async create(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    reply.hijack();
    try {
      await this.pipeline.handle(
        { requestId: request.id, headers: request.headers, body: request.body, raw: reply.raw },
        responsesClientFormat,
      );
    } catch (error) {
      if (!(error instanceof GatewayError)) this.logger.error(`request ${request.id} failed: ${(error as Error).stack ?? error}`);
      respondWithError(reply.raw, responsesClientFormat, error instanceof GatewayError ? inResponsesTerms(error) : internalError(), request.id);
    }
  }

  @Post('responses/input_tokens')
  async countInputTokens(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    reply.hijack();
    try {
      await this.counting.handle({ requestId: request.id, headers: request.headers, body: request.body, raw: reply.raw }, responsesInputTokens);
    } catch (error) {
      if (!(error instanceof GatewayError)) this.logger.error(`request ${request.id} failed: ${(error as Error).stack ?? error}`);
      respondWithError(reply.raw, responsesClientFormat, error instanceof GatewayError ? inResponsesTerms(error) : internalError(), request.id);
    }
  }
}
