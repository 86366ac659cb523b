import { type CanActivate, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RequestScoped } from '../../src/kernel/index.js';
import { GatewayError, firstHeader } from '../canonical/index.js';
import { AdminApiError } from './admin-error.js';
import { AdminKeyVerifier } from './admin-key-verifier.js';
import { AdminTokens } from './admin-tokens.js';

/** Who sent an admin request, as recorded in the metadata of every event it causes. */
const actors = new RequestScoped<FastifyRequest, string>('switchyard.admin.actor');

const ADMIN_TOKEN_ONLY = 'switchyard.admin.token-only';

/**
 * Marks a route only the admin token may call, never a gateway key (not even one with the `admin`
 * scope): changing provider credentials or base URLs decides where the gateway sends which secret.
 */
export const AdminTokenOnly = () => SetMetadata(ADMIN_TOKEN_ONLY, true);

/**
 * The admin API is behind the admin token (`Authorization: Bearer <token>` or `x-admin-token`), or a
 * gateway key that carries the `admin` scope (except on routes marked AdminTokenOnly). The actor is
 * `admin:<token id>` or `key:<key id>`.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(
    private readonly tokens: AdminTokens,
    private readonly keys: AdminKeyVerifier,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // Every admin answer carries the request id, which is also the correlation id of the events it causes.
    context.switchToHttp().getResponse<FastifyReply>().header('x-request-id', request.id);
    const actor = this.identify(request.headers);
    if (actor.startsWith('key:') && this.reflector.getAllAndOverride<boolean>(ADMIN_TOKEN_ONLY, [context.getHandler(), context.getClass()])) {
      throw new AdminApiError(403, 'admin_token_required', 'Changing provider credentials or base URLs needs the admin token; a gateway key cannot do it, whatever its scopes.');
    }
    actors.set(request, actor);
    return true;
  }

  /**
   * The actor a request's credentials stand for, or the 401/403 refusing them. Needs the headers only,
   * so the HTTP layer also calls it before reading a body.
   */
  identify(headers: FastifyRequest['headers']): string {
    const presented = presentedToken(headers);
    if (!presented) {
      throw new AdminApiError(401, 'unauthorized', 'Missing admin token. Send it as "Authorization: Bearer <token>" or "x-admin-token: <token>".');
    }
    const tokenId = this.tokens.verify(presented);
    if (tokenId !== null) return `admin:${tokenId}`;
    if (presented.startsWith('sk-sy-')) {
      try {
        return `key:${this.keys.authenticate({ authorization: `Bearer ${presented}` }, 'admin').keyId}`;
      } catch (error) {
        // A valid key without the admin scope (or of a suspended tenant) is refused as such, not as unknown.
        if (error instanceof GatewayError && error.status === 403) throw new AdminApiError(403, error.code, error.message);
        throw new AdminApiError(401, 'unauthorized', 'The admin token is not valid.');
      }
    }
    throw new AdminApiError(401, 'unauthorized', 'The admin token is not valid.');
  }
}

export function actorOf(request: FastifyRequest): string {
  const actor = actors.get(request);
  if (!actor) throw new Error('admin route without AdminGuard');
  return actor;
}

function presentedToken(headers: FastifyRequest['headers']): string | null {
  const header = headers['x-admin-token'];
  const direct = firstHeader(header);
  if (direct) return direct.trim();
  const authorization = headers.authorization;
  const match = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return match ? match[1] : null;
}
