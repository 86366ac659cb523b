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
