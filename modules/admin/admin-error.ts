import { HttpException, Logger } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { DomainError, WrongExpectedVersionError, isConnectionLoss } from '../../src/kernel/index.js';
import { GatewayError } from '../canonical/index.js';

export interface FieldProblem {
  /** Where in the request body, e.g. `routes[1].weight`. */
  path: string;
  message: string;
}

/** An error the admin API answers with: `{error:{code,message,fields?}}`. */
export class AdminApiError extends Error {
  override readonly name = 'AdminApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: FieldProblem[] | null = null,
  ) {
    super(message);
  }
}

const logger = new Logger('AdminApi');

/**
 * Maps anything thrown while serving an admin request to the admin envelope. Domain refusals keep their
 * status and code (404/409/422); a stale If-Match is 409; the rest says what to fix without internals.
 */
export function toAdminError(exception: unknown, method: string, url: string): AdminApiError {
  if (exception instanceof AdminApiError) return exception;
  if (exception instanceof DomainError) return new AdminApiError(exception.status, exception.code, exception.message);
  if (exception instanceof WrongExpectedVersionError) {
    return new AdminApiError(
      409, 'version_conflict',
      `The resource changed since you read it: it is at version ${exception.actual}, If-Match said ${String(exception.expected)}. Read it again and retry.`,
    );
  }
  if (exception instanceof GatewayError) return new AdminApiError(exception.status, exception.code, exception.message);
  // The data plane rides out an outage on its spool; control-plane changes need the log itself.
  if (isConnectionLoss(exception)) {
    return new AdminApiError(
      503, 'event_store_unavailable',
      'The event store (PostgreSQL) is unreachable, so nothing can be read from or written to the log now; nothing was changed. Retry when it is back.',
    );
  }
  const error = exception as { statusCode?: number; code?: string; message?: string };
  const status = exception instanceof HttpException ? exception.getStatus() : (error?.statusCode ?? 500);
  if (error?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) return new AdminApiError(413, 'request_too_large', 'The request body is too large.');
  if (error?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415) {
    return new AdminApiError(415, 'unsupported_content_type', 'Send the request body as application/json.');
  }
  if (error?.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error?.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || exception instanceof SyntaxError) {
    return new AdminApiError(400, 'invalid_json', 'The request body is not valid JSON.');
  }
  if (status === 404) return new AdminApiError(404, 'not_found', `Unknown route ${method} ${url.split('?')[0]}.`);
  if (status === 405) return new AdminApiError(405, 'method_not_allowed', `Method ${method} is not allowed here.`);
  if (status >= 400 && status < 500) return new AdminApiError(status, 'invalid_request', 'The request is invalid.');
  logger.error(`${method} ${url.split('?')[0]} failed: ${(exception as Error)?.stack ?? String(exception)}`);
  return new AdminApiError(500, 'internal_error', 'The admin API failed unexpectedly. The incident was logged; retry the request.');
}

export function adminErrorBody(error: AdminApiError): { error: { code: string; message: string; fields?: FieldProblem[] } } {
  return { error: { code: error.code, message: error.message, ...(error.fields ? { fields: error.fields } : {}) } };
}

/** The admin envelope for anything thrown while serving an admin request, before it is written. */
export function adminErrorAnswer(exception: unknown, method: string, url: string): { status: number; headers: Record<string, string>; body: string } {
  const error = toAdminError(exception, method, url);
  return {
    status: error.status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      ...(error.status === 401 ? { 'www-authenticate': 'Bearer realm="switchyard-admin"' } : {}),
    },
    body: JSON.stringify(adminErrorBody(error)),
  };
}

/** Writes the admin envelope on the raw response (also for errors Fastify raises before a route runs). */
export function respondWithAdminError(raw: ServerResponse, exception: unknown, method: string, url: string, requestId: string): void {
  if (raw.headersSent || raw.destroyed) {
    if (!raw.writableEnded) raw.end();
    return;
  }
  const answer = adminErrorAnswer(exception, method, url);
  raw.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body), 'x-request-id': requestId });
  raw.end(answer.body);
}

/** The admin API's path prefix; errors under it use the admin envelope, not a client format's. */
export function isAdminPath(url: string): boolean {
  return url === '/admin' || url.startsWith('/admin/') || url.startsWith('/admin?');
}

/** The console's API (sign-in, session); it answers errors in the admin envelope too, but needs no admin credential. */
export function isConsoleApiPath(url: string): boolean {
  return url === '/console/api' || url.startsWith('/console/api/') || url.startsWith('/console/api?');
}

/** Whether errors under this path use the admin envelope: the admin API and the console's API. */
export function answersInAdminEnvelope(url: string): boolean {
  return isAdminPath(url) || isConsoleApiPath(url);
}
