import { isIPv6 } from 'node:net';
import { knownSecretForms } from '../secret-references/known-secrets.js';

/** What a client may read of foreign text at most, after redaction. */
export const DEFAULT_MAX_REDACTED_LENGTH = 300;

const SECRET = '[redacted]';
const URL_MARK = '[url]';
const HOST = '[host]';

/**
 * Scrubs text that came from outside the gateway (a provider's error message) before anyone else reads
 * it. Removed: every credential value the process holds in any of its known encodings; URLs of any
 * scheme (DSNs included) and user:password@host pairs; IPv4 and IPv6 addresses, host:port pairs and host
 * names under common or internal suffixes; authorization headers and `key=value` secrets; PEM blocks,
 * JWTs, well-known token formats (OpenAI/Anthropic `sk-`, Google `AIza`, GitHub, Slack, AWS, Hugging
 * Face, Switchyard's own) and long random-looking hex or base64 runs. The result is one line, capped.
 *
 * Redaction runs on the whole text before the cap, so a cut never leaves half a secret behind.
 */
export function redactText(text: string, maxLength = DEFAULT_MAX_REDACTED_LENGTH): string {
  let out = text;
  for (const form of knownSecretForms()) if (out.includes(form)) out = out.split(form).join(SECRET);
  for (const [pattern, replacement] of SECRET_RULES) out = out.replace(pattern, replacement);
  out = out.replace(IPV6_CANDIDATE, (match) => (isIPv6(bareAddress(match)) ? HOST : match));
  for (const [pattern, replacement] of ADDRESS_RULES) out = out.replace(pattern, replacement);
  out = out.replace(TOKEN_RUN, (match) => (looksRandom(match) ? SECRET : match));
  out = out.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim();
  return out.length > maxLength ? `${out.slice(0, maxLength - 1)}…` : out;
}

const TLDS = [
  'com', 'net', 'org', 'io', 'ai', 'dev', 'app', 'cloud', 'co', 'me', 'us', 'uk', 'de', 'fr', 'nl', 'jp', 'cn', 'ru', 'in', 'eu', 'ca',
  'au', 'br', 'biz', 'info', 'xyz', 'site', 'tech', 'online', 'gov', 'edu', 'mil', 'int', 'goog', 'google', 'azure', 'aws',
  // private-use and special names
  'internal', 'local', 'localdomain', 'localhost', 'lan', 'corp', 'home', 'intranet', 'private', 'svc', 'cluster', 'consul', 'arpa',
  'test', 'example', 'invalid',
].join('|');

type Rule = [RegExp, string];

/**
 * Credential formats, by kind. redactText replaces them below; the content-safety secret detector (issue 36,
 * modules/content-safety) finds them in prompts and answers, so both know the same formats. Global regexes
 * shared by reference: a caller that runs exec loops works on its own copy (`new RegExp(p.source, p.flags)`).
 */
export const CREDENTIAL_PATTERNS = {
  /** PEM blocks, including a truncated one whose END line never came. */
  privateKeyBlock: /-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(?:-----END [A-Z0-9 ]+-----|$)/g,
  /**
   * A credential after its name: authorization schemes, `Credential=`, echoed credential headers, `password=…` (not
   * `max_tokens: 100`). Groups 1 and 2, when present, are the name and separator that precede the value.
   */
  assignments: [
    /\b(Bearer|Basic|Token|Digest|Negotiate|AWS4-HMAC-SHA256)\s+[^\s"',;]+/gi,
    /\b(Credential|Signature|SignedHeaders)=[^\s"',;&]+/g,
    /\b(proxy-authorization|authorization|x-api-key|api-key|x-goog-api-key|x-admin-token|cookie|set-cookie|x-amz-security-token)(["']?\s*[:=]\s*["']?)(?:(?:Bearer|Basic|Token|Digest|Negotiate|AWS4-HMAC-SHA256)\s+)?[^\s"',;}]+/gi,
    /\b((?:[A-Za-z0-9]+[_-])*(?:api[_-]?key|secret|token|password|passwd|pwd|private[_-]?key|signature|credentials?|access[_-]?key))(["']?\s*[:=]\s*["']?)[^\s"'&,;}]+/gi,
  ],
  /** JSON Web Tokens (two or three dot-separated base64url parts) and well-known token formats. */
  tokens: [
    /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]*)?/g,
    /\bsk-[A-Za-z0-9_-]{8,}/g,
    /\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{8,}/g,
    /\bAIza[0-9A-Za-z_-]{20,}/g,
    /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g,
    /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
    /\bglpat-[A-Za-z0-9_-]{20,}/g,
    /\bxox[abposr]-[A-Za-z0-9-]{8,}/g,
    /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b/g,
    /\bhf_[A-Za-z0-9]{20,}/g,
    /\bnpm_[A-Za-z0-9]{30,}/g,
    /\bsy-admin-[0-9A-Za-z]{20,}/g,
    /\b(?:key|token|secret)[-_][A-Za-z0-9_-]{12,}/gi,
  ],
  /** user:password@host, with or without a scheme (the credentials of a connection string). */
  credentialsInAddress: /[^\s:@/"'<>]+:[^\s@/"'<>]+@[^\s"'<>/,;]+/g,
} as const;

const SECRET_RULES: Rule[] = [
  [CREDENTIAL_PATTERNS.privateKeyBlock, SECRET],
  // URLs of any scheme: https://…, postgres://user:pw@…, redis://…, mongodb+srv://…
  [/\b[a-z][a-z0-9+.-]{1,30}:\/\/[^\s"'<>`]*[^\s"'<>`).,;:!?]/gi, URL_MARK],
  // Authorization schemes and their credentials; echoed credential headers; `password=…`.
  [CREDENTIAL_PATTERNS.assignments[0], `$1 ${SECRET}`],
  [CREDENTIAL_PATTERNS.assignments[1], `$1=${SECRET}`],
  [CREDENTIAL_PATTERNS.assignments[2], `$1$2${SECRET}`],
  [CREDENTIAL_PATTERNS.assignments[3], `$1$2${SECRET}`],
  ...CREDENTIAL_PATTERNS.tokens.map((pattern): Rule => [pattern, SECRET]),
  [CREDENTIAL_PATTERNS.credentialsInAddress, SECRET],
  // Long hex runs (keys, signatures, hashes of secrets).
  [/(?<![A-Za-z0-9])[0-9a-fA-F]{32,}(?![A-Za-z0-9])/g, SECRET],
];

const ADDRESS_RULES: Rule[] = [
  // IPv4 addresses, with a port when there is one.
  [/(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?(?![\w.])/g, HOST],
  // Dotted names with a port (`db.internal:5432`, not `model-v1:0`), `localhost`, and single-label hosts with a high port.
  [/(?<![\w.-])(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?:\d{2,5}(?![\w])/gi, HOST],
  [/(?<![\w.-])localhost(?::\d{1,5})?(?![\w-])/gi, HOST],
  [/(?<![\w.-])[a-z][a-z0-9-]*:\d{4,5}(?![\w.])/gi, HOST],
  // Host names under a known or private-use suffix.
  [new RegExp(`(?<![\\w.-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+(?:${TLDS})\\.?(?![\\w-])`, 'gi'), HOST],
];

/** Bracketed or bare runs of hex, colons and dots that may be an IPv6 address (validated with isIPv6). */
const IPV6_CANDIDATE = /\[[0-9A-Fa-f:.]+(?:%[\w.-]+)?\](?::\d{1,5})?|(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f.]*(?:%[\w.-]+)?(?![\w:])/g;

/** Candidate base64/base64url runs; looksRandom decides. */
const TOKEN_RUN = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/_-])/g;

function bareAddress(candidate: string): string {
  let address = candidate;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) address = bracketed[1];
  return address.replace(/%[\w.-]+$/, '');
}

/**
 * A token rather than an identifier: mixed case and digits, with a long stretch free of separators
 * (random base64 has few `-`/`_`; names such as `Meta-Llama-3-70B-Instruct-Turbo` have many).
 */
function looksRandom(run: string): boolean {
  if (!/[A-Z]/.test(run) || !/[a-z]/.test(run) || !/[0-9]/.test(run)) return false;
  const longestSegment = Math.max(...run.split(/[-_]/).map((segment) => segment.length));
  return longestSegment >= 20;
}
