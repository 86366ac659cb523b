import type { TLSSocket } from 'node:tls';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONSOLE_SESSION_COOKIE } from '../admin/index.js';

/**
 * Binds a pending OIDC sign-in to the browser that started it, so a callback URL sent to someone else
 * (login CSRF) signs nobody in. SameSite=Lax: the issuer's redirect back is a cross-site navigation, on
 * which a Strict cookie would not be sent. Its path is the OIDC routes only.
 */
export const OIDC_BINDING_COOKIE = 'switchyard_console_oidc';
const OIDC_PATH = '/console/api/oidc';

/** Whether the browser reached this listener over TLS (or the operator says a TLS proxy is in front). */
export function secureCookies(request: FastifyRequest, mode: 'auto' | 'always'): boolean {
  return mode === 'always' || (request.raw.socket as TLSSocket).encrypted === true;
}

/** The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site sends it), Secure over TLS. */
export function setSessionCookie(reply: FastifyReply, value: string, secure: boolean): void {
  appendCookie(reply, `${CONSOLE_SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`);
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  appendCookie(reply, `${CONSOLE_SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`);
}

export function setOidcBindingCookie(reply: FastifyReply, value: string, maxAgeSeconds: number, secure: boolean): void {
  appendCookie(reply, `${OIDC_BINDING_COOKIE}=${value}; Path=${OIDC_PATH}; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`);
}

export function clearOidcBindingCookie(reply: FastifyReply, secure: boolean): void {
  appendCookie(reply, `${OIDC_BINDING_COOKIE}=; Path=${OIDC_PATH}; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`);
}

/** One cookie's value from the request's Cookie header, or null. */
export function cookieOf(request: FastifyRequest, name: string): string | null {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return null;
}

function appendCookie(reply: FastifyReply, cookie: string): void {
  const existing = reply.getHeader('set-cookie');
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing.map(String) : [String(existing)];
  reply.header('set-cookie', [...list, cookie]);
}
