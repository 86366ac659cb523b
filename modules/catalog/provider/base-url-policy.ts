import { addressRefusal, classifyHost } from './outbound-address-policy.js';

/**
 * Provider base URLs are configured by operators, never by clients, but a mistaken or hostile config can
 * still aim the gateway at internal services (SSRF). The configured host is judged by the outbound
 * address policy here, at configuration time; the connection itself is judged again at connect time on
 * the resolved address (modules/providers/outbound-connector.ts).
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
  // WHATWG URL parsing has already normalised the host: decimal/hex IPv4 forms become dotted, IPv6 is compressed.
  const refusal = addressRefusal(classifyHost(url.hostname), allowPrivateNetwork);
  return refusal ? `baseUrl points at ${refusal}` : null;
}
