import { isIP } from 'node:net';

/**
 * Provider base URLs are configured by operators, never by clients, but a mistaken or hostile config can
 * still aim the gateway at internal services (SSRF). Refuse the obvious ones unless explicitly allowed.
 */
export function baseUrlProblem(raw: string, allowPrivateNetwork: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `baseUrl is not a valid URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `baseUrl must use http or https, not ${url.protocol}`;
  if (url.username || url.password) return 'baseUrl must not embed credentials; use apiKey with an env: or file: reference';
  if (url.search || url.hash) return 'baseUrl must not carry a query string or fragment';
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isMetadataHost(host)) return `baseUrl points at a cloud metadata address (${host})`;
  if (!allowPrivateNetwork && isLinkLocal(host)) return `baseUrl points at a link-local address (${host}); set allowPrivateNetwork to permit it`;
  return null;
}

function isMetadataHost(host: string): boolean {
  return ['169.254.169.254', 'fd00:ec2::254', 'metadata.google.internal', 'metadata', '100.100.100.200'].includes(host);
}

function isLinkLocal(host: string): boolean {
  if (isIP(host) === 4) return host.startsWith('169.254.');
  if (isIP(host) === 6) return /^fe[89ab][0-9a-f]:/.test(host);
  return false;
}
