import type { FastifyReply, FastifyRequest } from 'fastify';
import { isConsoleApiPath } from '../admin/index.js';

/**
 * The headers every /console response carries (the contract of issue 38): a Content-Security-Policy that
 * allows only the gateway's own scripts, styles and connections (no inline script or style, no framing,
 * no foreign form targets), no MIME sniffing, no referrer. `cacheControl` is the route's own: `no-store`
 * for the API and index.html, long caching for content-hashed assets.
 */
export function consoleSecurityHeaders(cacheControl = 'no-store'): Record<string, string> {
  return {
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': cacheControl,
  };
}

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/**
 * An `onRequest` hook: the console API's headers on the raw response, so every answer under /console/api
 * carries them, including those written before any route runs (an unknown route, a node shutting down) and
 * errors the admin error filter writes itself. Registered ahead of the authentication hook.
 */
export function consoleApiSecurityHeaders(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  if (isConsoleApiPath(request.url)) for (const [name, value] of Object.entries(consoleSecurityHeaders())) reply.raw.setHeader(name, value);
  done();
}
