import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answersInAdminEnvelope, respondWithAdminError } from '../../admin/index.js';
import { GatewayError } from '../../canonical/index.js';
import { openAiClientFormat } from '../formats/openai/openai-client-format.js';
import type { ClientFormat } from '../formats/client-format.js';
import { respondWithError } from './respond-with-error.js';

export const BODY_LIMIT = 4 * 1024 * 1024;

/**
 * Every error that reaches NestJS — including those Fastify raises before a route runs (malformed JSON,
 * body too large, wrong content type, unknown route) — is answered in the client format of the path,
 * with the request id, and without internals.
 */
@Catch()
export class GatewayExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Http');

  constructor(private readonly formatFor: (path: string) => ClientFormat = () => openAiClientFormat) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (!reply.sent) reply.hijack();
    if (answersInAdminEnvelope(request.url)) return respondWithAdminError(reply.raw, exception, request.method, request.url, request.id);
    const error = this.toGatewayError(exception, request);
    respondWithError(reply.raw, this.formatFor(request.url), error, request.id);
  }

  private toGatewayError(exception: unknown, request: FastifyRequest): GatewayError {
    if (exception instanceof GatewayError) return exception;
    const error = exception as { statusCode?: number; code?: string; message?: string; status?: number };
    const status = exception instanceof HttpException ? exception.getStatus() : (error?.statusCode ?? 500);
    if (error?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) {
      return new GatewayError(413, 'request_too_large', `The request body exceeds ${BODY_LIMIT / (1024 * 1024)} MiB (a fixed limit of the gateway).`);
    }
    if (error?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415) {
      return new GatewayError(400, 'unsupported_content_type', 'Send the request body as application/json.');
    }
    if (error?.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return new GatewayError(400, 'invalid_json', 'The request body is empty; send a JSON object.');
    if (error?.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || exception instanceof SyntaxError) {
      return new GatewayError(400, 'invalid_json', 'The request body is not valid JSON.');
    }
    if (status === 404) return new GatewayError(404, 'not_found', `Unknown route ${request.method} ${request.url.split('?')[0]}.`);
    if (status === 405) return new GatewayError(405, 'method_not_allowed', `Method ${request.method} is not allowed here.`);
    if (status >= 400 && status < 500) return new GatewayError(status, 'invalid_request', error?.message ?? 'The request is invalid.');
    this.logger.error(`request ${request.id}: ${(exception as Error)?.stack ?? String(exception)}`);
    return new GatewayError(500, 'internal_error', 'The gateway failed unexpectedly. The incident was logged; retry the request.');
  }
}
