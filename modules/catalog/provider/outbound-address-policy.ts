import { isIP } from 'node:net';

/**
 * Which addresses a provider may be reached at (SSRF defence). Checked twice: on the configured base
 * URL when a provider is registered or applied, and at connect time on every address DNS returns (the
 * address checked is the address connected to). IPv4 embedded in IPv6 (mapped `::ffff:a.b.c.d`,
 * compatible, NAT64, 6to4) is judged as the IPv4 address it reaches.
 *
 * - `metadata` (cloud instance metadata: 169.254.169.254, fd00:ec2::254, 100.100.100.200, …) and
 *   `reserved` (unspecified, multicast, broadcast, documentation and other special-purpose ranges) are
 *   never allowed.
 * - `loopback` (127.0.0.0/8, ::1), `private` (RFC 1918, CGNAT 100.64.0.0/10, benchmarking 198.18.0.0/15,
 *   ULA fc00::/7, site-local fec0::/10) and `link-local` (169.254.0.0/16, fe80::/10) are allowed only for a
 *   provider with `allowPrivateNetwork: true`.
 * - everything else is `public` and allowed.
 */
export type AddressCategory = 'public' | 'loopback' | 'private' | 'link-local' | 'metadata' | 'reserved';

const PRIVATE_NETWORK: ReadonlySet<AddressCategory> = new Set(['loopback', 'private', 'link-local']);

/** Null when the provider may connect to an address of this category, else why not (without the address). */
export function addressRefusal(category: AddressCategory, allowPrivateNetwork: boolean): string | null {
  switch (category) {
    case 'public':
      return null;
    case 'metadata':
      return 'a cloud metadata address, which is never allowed';
    case 'reserved':
      return 'a reserved or non-unicast address, which is never allowed';
    default:
      return allowPrivateNetwork && PRIVATE_NETWORK.has(category)
        ? null
        : `a ${category} address; set allowPrivateNetwork: true on the provider to permit loopback, private and link-local addresses`;
  }
}

type Range4 = [number, number, AddressCategory];

const IPV4_RANGES: Range4[] = [
  // Most specific first: the metadata endpoints sit inside link-local and private ranges.
  ...['169.254.169.254', '169.254.170.2', '169.254.170.23', '100.100.100.200', '168.63.129.16', '192.0.0.192'].map(
    (ip): Range4 => [ipv4Number(ip), 32, 'metadata'],
  ),
  [ipv4Number('0.0.0.0'), 8, 'reserved'],
  [ipv4Number('127.0.0.0'), 8, 'loopback'],
  [ipv4Number('169.254.0.0'), 16, 'link-local'],
  [ipv4Number('10.0.0.0'), 8, 'private'],
  [ipv4Number('172.16.0.0'), 12, 'private'],
  [ipv4Number('192.168.0.0'), 16, 'private'],
  [ipv4Number('100.64.0.0'), 10, 'private'],
  [ipv4Number('198.18.0.0'), 15, 'private'],
  [ipv4Number('192.0.0.0'), 24, 'reserved'],
  [ipv4Number('192.0.2.0'), 24, 'reserved'],
  [ipv4Number('198.51.100.0'), 24, 'reserved'],
  [ipv4Number('203.0.113.0'), 24, 'reserved'],
  [ipv4Number('224.0.0.0'), 4, 'reserved'],
  [ipv4Number('240.0.0.0'), 4, 'reserved'],
];

type Range6 = [bigint, number, AddressCategory];

const IPV6_RANGES: Range6[] = [
  [ipv6Number('fd00:ec2::254'), 128, 'metadata'],
  [ipv6Number('fd00:ec2::23'), 128, 'metadata'],
  [ipv6Number('::'), 128, 'reserved'],
  [ipv6Number('::1'), 128, 'loopback'],
  [ipv6Number('fe80::'), 10, 'link-local'],
  [ipv6Number('fc00::'), 7, 'private'],
  [ipv6Number('fec0::'), 10, 'private'],
  [ipv6Number('ff00::'), 8, 'reserved'],
  [ipv6Number('2001:db8::'), 32, 'reserved'],
  [ipv6Number('100::'), 64, 'reserved'],
  // IETF protocol assignments, Teredo (whose IPv4 is obfuscated), benchmarking, ORCHID.
  [ipv6Number('2001::'), 23, 'reserved'],
];

/** The category of an IP literal (brackets and a zone id allowed); throws for anything else. */
export function classifyAddress(literal: string): AddressCategory {
  const address = literal.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const version = isIP(address);
  if (version === 4) return classifyIpv4(ipv4Number(address));
  if (version === 6) return classifyIpv6(ipv6Number(address));
  throw new Error(`not an IP address: ${literal}`);
}

function classifyIpv4(value: number): AddressCategory {
  for (const [base, bits, category] of IPV4_RANGES) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if (((value & mask) >>> 0) === ((base & mask) >>> 0)) return category;
  }
  return 'public';
}

function classifyIpv6(value: bigint): AddressCategory {
  const embedded = embeddedIpv4(value);
  if (embedded !== null) return classifyIpv4(embedded);
  for (const [base, bits, category] of IPV6_RANGES) {
    const shift = BigInt(128 - bits);
    if (value >> shift === base >> shift) return category;
  }
  return 'public';
}

/** The IPv4 address an IPv6 address reaches by translation, if it embeds one. */
function embeddedIpv4(value: bigint): number | null {
  const low32 = Number(value & 0xffffffffn);
  const high96 = value >> 32n;
  if (high96 === 0xffffn) return low32; // ::ffff:a.b.c.d, IPv4-mapped
  if (high96 === 0xffff0000n) return low32; // ::ffff:0:a.b.c.d, SIIT
  if (high96 === 0n && low32 > 1) return low32; // ::a.b.c.d, IPv4-compatible (:: and ::1 excluded)
  if (high96 === 0x64ff9b0000000000000000n) return low32; // 64:ff9b::/96, NAT64
  if (value >> 80n === 0x64ff9b0001n) return low32; // 64:ff9b:1::/48, local-use NAT64
  if (value >> 112n === 0x2002n) return Number((value >> 80n) & 0xffffffffn); // 2002:AABB:CCDD::/48, 6to4
  return null;
}

function ipv4Number(address: string): number {
  return address.split('.').reduce((sum, part) => sum * 256 + Number(part), 0) >>> 0;
}

/** `address` must be valid (isIP === 6): `::` expansion and a trailing dotted IPv4 are handled. */
function ipv6Number(address: string): bigint {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4Number(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const missing = 8 - headParts.length - tailParts.length;
  const words = tail === null ? headParts : [...headParts, ...Array<string>(missing).fill('0'), ...tailParts];
  return words.reduce((sum, word) => (sum << 16n) | BigInt(parseInt(word || '0', 16)), 0n);
}

const METADATA_NAMES = new Set([
  'metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal', 'metadata.azure.internal',
  'metadata.tencentyun.com', 'metadata.platformequinix.com',
]);

/** Names that resolve to loopback by definition or by well-known wildcard DNS. */
const LOOPBACK_NAMES = ['localhost', 'localtest.me', 'lvh.me', 'vcap.me', 'lacolhost.com'];

const PRIVATE_SUFFIXES = ['internal', 'local', 'localdomain', 'lan', 'home.arpa', 'intranet', 'corp', 'private', 'svc', 'cluster.local'];

/**
 * The category of a configured host, without DNS: IP literals exactly; names by what they are known to
 * reach (metadata names, localhost and loopback wildcard names, private-use suffixes, single-label names,
 * and names that embed an IPv4 address such as `169.254.169.254.nip.io` or `10-0-0-1.sslip.io`). Any other
 * name is `public` here; connect-time checks judge what it resolves to.
 */
export function classifyHost(rawHost: string): AddressCategory {
  const host = rawHost.replace(/^\[|\]$/g, '').replace(/\.+$/, '').toLowerCase();
  if (isIP(host.replace(/%.*$/, ''))) return classifyAddress(host);
  if (METADATA_NAMES.has(host)) return 'metadata';
  if (LOOPBACK_NAMES.some((name) => host === name || host.endsWith(`.${name}`))) return 'loopback';
  const embedded = embeddedIpv4InName(host);
  if (embedded !== null) {
    const category = classifyAddress(embedded);
    if (category !== 'public') return category;
  }
  if (!host.includes('.')) return 'private';
  if (PRIVATE_SUFFIXES.some((suffix) => host.endsWith(`.${suffix}`))) return 'private';
  return 'public';
}

function embeddedIpv4InName(host: string): string | null {
  const dotted = /(?:^|[.-])((?:\d{1,3}\.){3}\d{1,3})(?:[.-]|$)/.exec(host);
  const candidate = dotted?.[1] ?? /(?:^|[.-])(\d{1,3}(?:-\d{1,3}){3})(?:[.-]|$)/.exec(host)?.[1].replace(/-/g, '.');
  return candidate && isIP(candidate) === 4 ? candidate : null;
}

/**
 * What is wrong with the URL of an outbound call an operator configures (a budget webhook, a content-policy webhook):
 * an http(s) URL without embedded credentials whose host the outbound address policy allows (judged on the configured
 * host here, and again at connect time on the resolved address). Null when it may be called; the caller names the field.
 */
export function outboundUrlProblem(raw: unknown, allowPrivateNetwork: boolean): string | null {
  if (typeof raw !== 'string') return 'must be an http(s) URL';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) URL';
  if (url.username || url.password) return 'must not embed credentials';
  // WHATWG URL parsing has already normalised the host: decimal/hex IPv4 forms become dotted, IPv6 is compressed.
  const refusal = addressRefusal(classifyHost(url.hostname), allowPrivateNetwork);
  // The provider policy's advice names the provider's knob; a webhook has its own.
  return refusal ? `points at ${refusal.replace('on the provider', 'on the webhook')}` : null;
}
