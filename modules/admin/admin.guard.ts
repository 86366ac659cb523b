import { type CanActivate, type ExecutionContext, Injectable, Optional, SetMetadata } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PLATFORM_SCOPE } from '../../events/index.js';
import { RequestScoped } from '../../src/kernel/index.js';
import { GatewayError, firstHeader } from '../canonical/index.js';
import { accessOf, adminAreaOf, rolesAllowed } from './admin-area.js';
import { AdminApiError } from './admin-error.js';
import { AdminKeyVerifier } from './admin-key-verifier.js';
import { AdminPrincipal, platformScopeRequired } from './admin-principal.js';
import { type AdminSession, AdminSessions, sessionCookieOf } from './admin-sessions.js';
import { AdminTokens } from './admin-tokens.js';

/** Who sent an admin request and how far it reaches; its actor is recorded in the metadata of every event it causes. */
const principals = new RequestScoped<FastifyRequest, AdminPrincipal>('switchyard.admin.principal');

const ADMIN_TOKEN_ONLY = 'switchyard.admin.token-only';
const TENANT_ACCESS = 'switchyard.admin.tenant-access';

/**
 * Marks a route only the admin token may call, never a gateway key (not even one with `admin:platform`):
 * changing provider credentials or base URLs decides where the gateway sends which secret.
 */
export const AdminTokenOnly = () => SetMetadata(ADMIN_TOKEN_ONLY, true);

/**
 * How a tenant admin (a key with `admin`, not `admin:platform`) may use a route. Unmarked routes are
 * platform administration: a tenant admin gets 403 `platform_scope_required` before anything runs.
 * - `scoped`: it may call the route, and the handler confines what it reads or changes to the caller's
 *   tenant (`principalOf(request)`): another tenant's resources answer 404, as if they did not exist.
 * - `tenant-param`: a platform-only operation on the tenant named by a path parameter. Another tenant's
 *   id answers 404 (so the route cannot be used to enumerate tenants), its own tenant's 403.
 */
export type TenantAccess = { kind: 'scoped' } | { kind: 'tenant-param'; param: string };

/**
 * A tenant admin may call this route; the handler confines it to the caller's tenant. Put it on handlers,
 * not controllers, so that a route added later is the platform's until someone confines it.
 */
export const TenantScoped = () => SetMetadata(TENANT_ACCESS, { kind: 'scoped' } satisfies TenantAccess);

/** Platform administration of the tenant named by the path parameter `param` (404 for another tenant's admin, 403 for its own). */
export const PlatformOnlyOnTenant = (param = 'id') => SetMetadata(TENANT_ACCESS, { kind: 'tenant-param', param } satisfies TenantAccess);

/** How a tenant admin may use the handler (undefined = not at all: platform only). For tests and documentation. */
export function tenantAccessOf(reflector: Reflector, handler: object, controller: object): TenantAccess | undefined {
  return reflector.getAllAndOverride<TenantAccess | undefined>(TENANT_ACCESS, [handler as () => void, controller as () => void]);
}

/** Whether only the admin token may call the handler. For tests and documentation. */
export function adminTokenOnly(reflector: Reflector, handler: object, controller: object): boolean {
  return reflector.getAllAndOverride<boolean>(ADMIN_TOKEN_ONLY, [handler as () => void, controller as () => void]) === true;
}

/**
 * The admin API is behind the admin token (`Authorization: Bearer <token>` or `x-admin-token`), or a
 * gateway key with the `admin` scope (its own tenant) or the `admin:platform` scope (every tenant), or a
 * console session cookie. Routes marked AdminTokenOnly refuse every key; routes not marked TenantScoped or
 * PlatformOnlyOnTenant refuse tenant admins. A session must carry its CSRF token on every change and have
 * a role the route's area allows (admin-area.ts). The actor is `admin:<token id>`, `key:<key id>` or
 * `console:<user>`.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(
    private readonly tokens: AdminTokens,
    private readonly keys: AdminKeyVerifier,
    private readonly reflector: Reflector,
    // Absent only in an application without the console: then a cookie opens nothing.
    @Optional() private readonly sessions?: AdminSessions,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // Every admin answer carries the request id, which is also the correlation id of the events it causes.
    context.switchToHttp().getResponse<FastifyReply>().header('x-request-id', request.id);
    const principal = await this.identify(request.headers, 'admin', request.method);
    const handler = context.getHandler();
    const controller = context.getClass();
    const tokenOnly = adminTokenOnly(this.reflector, handler, controller);
    const session = sessionsOfPrincipals.get(principal);
    if (session) authorizeSession(request, session, adminAreaOf(this.reflector, handler, controller), tokenOnly);
    if (principal.actor.startsWith('key:') && tokenOnly) {
      throw new AdminApiError(403, 'admin_token_required', 'Changing provider credentials or base URLs needs the admin token; a gateway key cannot do it, whatever its scopes.');
    }
    if (!principal.isPlatform) {
      const access = tenantAccessOf(this.reflector, handler, controller);
      if (access === undefined) throw platformScopeRequired();
      if (access.kind === 'tenant-param') {
        const tenantId = (request.params as Record<string, string | undefined>)[access.param] ?? '';
        principal.requireTenant(tenantId);
        throw platformScopeRequired();
      }
    }
    principals.set(request, principal);
    return true;
  }

  /**
   * The principal a request's credentials stand for, or the 401/403 refusing them. Needs the headers only,
   * so the HTTP layer also calls it before reading a body; `required: 'platform'` refuses tenant admins and
   * console sessions (for `/metrics`, which has no guard of its own and takes the token or a key only).
   * A credential header wins over a session cookie; a session is looked up in its store (asynchronous), and
   * given the request's `method`, a change without the session's CSRF token is refused here already.
   */
  identify(headers: FastifyRequest['headers'], required: 'admin' | 'platform' = 'admin', method?: string): AdminPrincipal | Promise<AdminPrincipal> {
    const presented = presentedToken(headers);
    if (!presented) {
      const cookie = required === 'admin' ? sessionCookieOf(headers.cookie) : null;
      if (cookie !== null && this.sessions) return this.sessionPrincipal(cookie, headers, method);
      throw new AdminApiError(401, 'unauthorized', 'Missing admin token. Send it as "Authorization: Bearer <token>" or "x-admin-token: <token>".');
    }
    const tokenId = this.tokens.verify(presented);
    if (tokenId !== null) return AdminPrincipal.platform(`admin:${tokenId}`);
    if (!presented.startsWith('sk-sy-')) throw new AdminApiError(401, 'unauthorized', 'The admin token is not valid.');
    let principal: AdminPrincipal;
    try {
      const key = this.keys.authenticateAdmin({ authorization: `Bearer ${presented}` });
      const actor = `key:${key.keyId}`;
      principal = key.scopes.includes(PLATFORM_SCOPE)
        ? AdminPrincipal.platform(actor)
        : AdminPrincipal.tenant(actor, key.tenantId, { scopes: key.scopes, aliases: key.aliases });
    } catch (error) {
      // A valid key without an admin scope (or of a suspended tenant) is refused as such, not as unknown.
      if (error instanceof GatewayError && error.status === 403) throw new AdminApiError(403, error.code, error.message);
      throw new AdminApiError(401, 'unauthorized', 'The admin token is not valid.');
    }
    if (required === 'platform') principal.requirePlatform();
    return principal;
  }

  private async sessionPrincipal(cookie: string, headers: FastifyRequest['headers'], method: string | undefined): Promise<AdminPrincipal> {
    const session = await this.sessions!.find(cookie);
    if (session === null) throw sessionRequired();
    if (method !== undefined && isChange(method)) requireCsrfToken(headers, session);
    const principal = AdminPrincipal.consoleUser(session.user, session.role);
    sessionsOfPrincipals.set(principal, session);
    return principal;
  }
}

/** The session behind a console principal: its CSRF token is checked on changes. */
const sessionsOfPrincipals = new WeakMap<AdminPrincipal, AdminSession>();

/**
 * A session's request: every change carries the session's CSRF token (the cookie alone proves nothing about
 * which page sent the request), and the role must be one the route's area allows for a read or a change.
 */
function authorizeSession(request: FastifyRequest, session: AdminSession, mark: ReturnType<typeof adminAreaOf>, tokenOnly: boolean): void {
  const access = accessOf(request.method, mark);
  if (isChange(request.method)) requireCsrfToken(request.headers, session);
  const allowed = rolesAllowed(mark, access, tokenOnly);
  if (!allowed.includes(session.role)) {
    const what = access === 'read' ? 'Reading this' : 'This change';
    throw new AdminApiError(403, 'role_forbidden', `${what} needs the console role ${allowed.join(' or ')}; this session has the role ${session.role}.`);
  }
}

/** Every method but GET and HEAD needs the CSRF token, whatever the route does (a POST that only reads included). */
function isChange(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD';
}

/** 403 `csrf_token_required` unless `x-csrf-token` is the session's token (compared in constant time). */
export function requireCsrfToken(headers: FastifyRequest['headers'], session: Pick<AdminSession, 'csrfToken'>): void {
  const presented = Buffer.from(firstHeader(headers['x-csrf-token']) ?? '', 'utf8');
  const expected = Buffer.from(session.csrfToken, 'utf8');
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
    throw new AdminApiError(403, 'csrf_token_required', 'A change made with a console session must carry the session\'s CSRF token in the x-csrf-token header.');
  }
}

/** 401 for a cookie whose session is unknown, signed out or expired. */
export function sessionRequired(): AdminApiError {
  return new AdminApiError(401, 'session_required', 'No console session, or it has ended (signed out, idle too long, or past its maximum age). Sign in again.');
}

export function principalOf(request: FastifyRequest): AdminPrincipal {
  const principal = principals.get(request);
  if (!principal) throw new Error('admin route without AdminGuard');
  return principal;
}

export function actorOf(request: FastifyRequest): string {
  return principalOf(request).actor;
}

function presentedToken(headers: FastifyRequest['headers']): string | null {
  const header = headers['x-admin-token'];
  const direct = firstHeader(header);
  if (direct) return direct.trim();
  const authorization = headers.authorization;
  const match = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return match ? match[1] : null;
}
