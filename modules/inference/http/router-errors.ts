import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../canonical/index.js';
import { errorAnswerForPath } from './error-answer-for-path.js';
import { writeAnswer } from './respond-with-error.js';

/**
 * Fastify's router refuses some requests before any hook runs: a URL that does not decode (400) and a
 * path parameter over its length limit (414). Its `frameworkErrors` handler: answered in the envelope of
 * the path, with the request id, instead of Fastify's `{statusCode, code, error, message}`.
 */
export function answerRouterError(error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
  const refusal = error.code === 'FST_ERR_MAX_PARAM_LENGTH'
    ? new GatewayError(414, 'uri_too_long', 'A segment of the request path is too long.')
    : new GatewayError(400, 'invalid_request', 'The request URL is not valid (it does not decode).');
  reply.hijack();
  writeAnswer(reply.raw, errorAnswerForPath(request.url, request.method, refusal), request.id);
}
