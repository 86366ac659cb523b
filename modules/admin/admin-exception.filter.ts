import { type ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { respondWithAdminError } from './admin-error.js';

/** Renders every error of an admin controller (guard, validation, domain, concurrency) in the admin envelope. */
@Catch()
export class AdminExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (!reply.sent) reply.hijack();
    respondWithAdminError(reply.raw, exception, request.method, request.url, request.id);
  }
}
