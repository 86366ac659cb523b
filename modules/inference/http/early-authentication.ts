import { Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Server } from 'node:http';
import type { KeyScope } from '../../../events/index.js';
import { answersInAdminEnvelope, isAdminPath, respondWithAdminError } from '../../admin/index.js';
import type { GatewayAuthenticator } from '../../access/index.js';
import { GatewayError } from '../../canonical/index.js';
import { clientFormatForPath } from './client-format-for-path.js';
import { internalError, respondWithError } from './respond-with-error.js';

/**
 * The admin credential check: the admin token, a gateway key with the `admin` or `admin:platform`
 * scope, or a console session cookie (looked up asynchronously, hence a promise); `platform` refuses a key
 * that administers one tenant only. Throws (or rejects with) AdminApiError.
 */
export interface AdminIdentification {
  /** `method`: a console session's change without its CSRF token is refused too, before the body. */
  identify(headers: FastifyRequest['headers'], required?: 'admin' | 'platform', method?: string): unknown;
}

/**
 * An `onRequest` hook, so it runs before any byte of the body is read: a request to /v1/* needs a valid
 * gateway key (from the in-memory key index) with the route's scope, one to /admin/* an admin credential.
 * A refused request is answered at once in its path's envelope; its body is never buffered or parsed
 * (Node discards it, within the body timeout), and a client that asked `Expect: 100-continue` is never
 * told to send it. The controllers and guards check again; this only moves the refusal ahead of the
 * body. An unknown route is answered 404 just as early, and while the node shuts down every request
 * gets a 503 in its envelope.
 */
export class EarlyAuthentication {
  private readonly logger = new Logger('Http');

  constructor(
    private readonly keys: GatewayAuthenticator,
    private readonly admin: AdminIdentification,
    private readonly closing: () => boolean,
    /** Paths outside /admin that need a platform admin credential (`/metrics`, unless opened: it spans every tenant). */
    private readonly adminOnly: (path: string) => boolean = () => false,
  ) {}

  readonly onRequest = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const url = request.url;
    if (this.closing()) return this.refuse(request, reply, shuttingDown(), true);
    // An unknown route needs neither credentials nor its body to be answered.
    if (request.is404) return this.refuse(request, reply, new GatewayError(404, 'not_found', `Unknown route ${request.method} ${url.split('?')[0]}.`));
    let identified: unknown;
    try {
      if (isAdminPath(url)) identified = this.admin.identify(request.headers, 'admin', request.method);
      else if (this.adminOnly(url.split('?')[0])) this.admin.identify(request.headers, 'platform');
      else if (url.startsWith('/v1/')) this.keys.authenticate(request.headers, scopeFor(url));
    } catch (error) {
      return this.refuse(request, reply, error);
    }
    if (identified instanceof Promise) {
      identified.then(() => this.admit(request, reply, done), (error: unknown) => this.refuse(request, reply, error));
      return;
    }
    this.admit(request, reply, done);
  };

  private admit(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
    // Only now is a client that waits for it told to send its body (see the server's checkContinue handler).
    if (expectsContinue(request)) reply.raw.writeContinue();
    done();
  }

  /**
   * Answers at once. The connection is closed when it is of no further use: the node is shutting down
   * (the client's retry goes elsewhere), or the client waits for "100 Continue" and will send no body.
   */
  private refuse(request: FastifyRequest, reply: FastifyReply, error: unknown, closeConnection = false): void {
    reply.hijack();
    if (closeConnection || expectsContinue(request)) reply.raw.setHeader('connection', 'close');
    if (answersInAdminEnvelope(request.url) || this.adminOnly(request.url.split('?')[0])) return respondWithAdminError(reply.raw, error, request.method, request.url, request.id);
    if (!(error instanceof GatewayError)) this.logger.error(`request ${request.id}: authentication failed unexpectedly: ${(error as Error)?.stack ?? String(error)}`);
    respondWithError(reply.raw, clientFormatForPath(request.url), error instanceof GatewayError ? error : internalError(), request.id);
  }
}

/**
 * Node answers `Expect: 100-continue` itself, before any hook runs. With this handler the request goes
 * to Fastify unanswered and EarlyAuthentication sends "100 Continue" once the credentials are accepted.
 */
export function deferContinue(server: Server): void {
  server.on('checkContinue', (request, response) => server.emit('request', request, response));
}

function expectsContinue(request: FastifyRequest): boolean {
  return /^100-continue$/i.test(String(request.headers.expect ?? ''));
}

function scopeFor(url: string): KeyScope {
  return /^\/v1\/models(?:[/?]|$)/.test(url) ? 'models:read' : 'inference';
}

function shuttingDown(): GatewayError {
  return new GatewayError(503, 'overloaded', 'This gateway node is shutting down; retry the request.', null, { 'retry-after': '1' });
}
