import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FindingType } from './finding.js';
import type { PlaceholderKeys } from './placeholder-keys.js';

/**
 * Placeholder grammar, version PII1 (seed 004 "Reversible PII Tokenization"):
 *
 *   `[PII1_<TYPE>_<ID>_<MAC>]`   e.g. `[PII1_EMAIL_K3M2Q7ZB4XW5A_J6T2RZ4MQA]`
 *
 * - TYPE: the finding type's code (EMAIL, PHONE, CARD, IBAN, NID, IP, SECRET, PI, DENY, CUSTOM), 2–6 capitals;
 * - ID: 13 base32 characters (65 bits) of HMAC(idKey, scope, type, value): the same value in the same scope gets the
 *   same placeholder (the model sees consistent references), another scope a different, unlinkable one;
 * - MAC: 10 base32 characters (50 bits) of HMAC(macKey, "PII1", TYPE, ID, scope): a placeholder is recovered only
 *   in the scope (tenant + request, or tenant + session) that made it, and cannot be forged without the key.
 * Fixed ASCII, at most 38 characters, no character that tokenizers or JSON escape.
 */
export const PLACEHOLDER_PREFIX = '[PII1_';
const ID_LENGTH = 13;
const MAC_LENGTH = 10;
/** Bytes of HMAC output that give ID_LENGTH and MAC_LENGTH base32 characters (5 bits each). */
const ID_BYTES = Math.ceil((ID_LENGTH * 5) / 8);
const MAC_BYTES = Math.ceil((MAC_LENGTH * 5) / 8);
const MAX_CODE_LENGTH = 6;
const MIN_CODE_LENGTH = 2;
/** The longest placeholder: what a stream holds back at most for recovery. */
export const MAX_PLACEHOLDER_LENGTH = PLACEHOLDER_PREFIX.length + MAX_CODE_LENGTH + 1 + ID_LENGTH + 1 + MAC_LENGTH + 1;

/**
 * The server-owned instruction a policy with `placeholderInstruction` adds when the input was tokenized: models keep
 * placeholders better when told to copy them verbatim. It does not spell a placeholder prefix itself: an answer
 * that quotes it must not count as an unresolved placeholder.
 */
export const PLACEHOLDER_INSTRUCTION =
  'Some values in this conversation were replaced by placeholders: square brackets around a code that starts with PII1. ' +
  'When you refer to one of them, copy its placeholder exactly, character for character, brackets included; never ' +
  'change, shorten or invent a placeholder.';

const PLACEHOLDER = /\[PII1_([A-Z]{2,6})_([A-Z2-7]{13})_([A-Z2-7]{10})\]/g;

const TYPE_CODES: Record<string, string> = {
  email: 'EMAIL', phone: 'PHONE', card: 'CARD', iban: 'IBAN', national_id: 'NID', ip_address: 'IP', secret: 'SECRET',
  prompt_injection: 'PI', deny_terms: 'DENY',
};

/** Where a placeholder is recovered: a tenant's request, or a tenant's session (`x-session-id`). */
export interface TokenScope {
  tenantId: string;
  kind: 'request' | 'session';
  /** The request id or the session id. */
  id: string;
}

export function typeCode(type: FindingType): string {
  return TYPE_CODES[type] ?? 'CUSTOM';
}

/** The unambiguous scope string MACs and ids bind (NUL cannot appear in ids). */
export function scopeBinding(scope: TokenScope): string {
  return `${scope.kind}\u0000${scope.tenantId}\u0000${scope.id}`;
}

/** The placeholder of `value` (of `type`) in `scope`. */
export function makePlaceholder(keys: PlaceholderKeys, scope: TokenScope, type: FindingType, value: string): string {
  const code = typeCode(type);
  const binding = scopeBinding(scope);
  const id = base32(createHmac('sha256', keys.id).update(`${binding}\u0000${code}\u0000${value}`).digest().subarray(0, ID_BYTES)).slice(0, ID_LENGTH);
  return `${PLACEHOLDER_PREFIX}${code}_${id}_${macOf(keys, binding, code, id)}]`;
}

/** The parts of an exact placeholder, or null. */
export function parsePlaceholder(text: string): { code: string; id: string; mac: string } | null {
  PLACEHOLDER.lastIndex = 0;
  const match = PLACEHOLDER.exec(text);
  if (!match || match.index !== 0 || match[0].length !== text.length) return null;
  return { code: match[1], id: match[2], mac: match[3] };
}

/** Whether `placeholder` is exact and was made in `scope` with these keys (constant-time MAC comparison). */
export function verifyPlaceholder(keys: PlaceholderKeys, scope: TokenScope, placeholder: string): boolean {
  const parts = parsePlaceholder(placeholder);
  if (!parts) return false;
  const expected = Buffer.from(macOf(keys, scopeBinding(scope), parts.code, parts.id));
  const given = Buffer.from(parts.mac);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** The spans of exact placeholders (grammar only; not verified) in text order. */
export function placeholderSpans(text: string): Array<[number, number]> {
  if (!text.includes(PLACEHOLDER_PREFIX)) return [];
  const spans: Array<[number, number]> = [];
  PLACEHOLDER.lastIndex = 0;
  for (let match = PLACEHOLDER.exec(text); match !== null; match = PLACEHOLDER.exec(text)) spans.push([match.index, match.index + match[0].length]);
  return spans;
}

/**
 * How much of `text` from `at` matches the grammar: the length of a complete placeholder there, `0` when the rest
 * of the text is a proper prefix of one (more may come), `-1` when no placeholder starts at `at`.
 */
export function placeholderPrefixAt(text: string, at: number): number {
  let i = at;
  const end = text.length;
  for (let k = 0; k < PLACEHOLDER_PREFIX.length; k++, i++) {
    if (i === end) return 0;
    if (text.charCodeAt(i) !== PLACEHOLDER_PREFIX.charCodeAt(k)) return -1;
  }
  let code = 0;
  for (; ; i++, code++) {
    if (i === end) return 0;
    const c = text.charCodeAt(i);
    if (c === 0x5f && code >= MIN_CODE_LENGTH) { i++; break; }
    if (c < 0x41 || c > 0x5a || code === MAX_CODE_LENGTH) return -1;
  }
  for (const length of [ID_LENGTH, MAC_LENGTH]) {
    for (let k = 0; k < length; k++, i++) {
      if (i === end) return 0;
      if (!isBase32(text.charCodeAt(i))) return -1;
    }
    if (i === end) return 0;
    if (text.charCodeAt(i) !== (length === ID_LENGTH ? 0x5f : 0x5d)) return -1;
    i++;
  }
  return i - at;
}

function isBase32(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x32 && c <= 0x37);
}

function macOf(keys: PlaceholderKeys, binding: string, code: string, id: string): string {
  return base32(createHmac('sha256', keys.mac).update(`PII1\u0000${code}\u0000${id}\u0000${binding}`).digest().subarray(0, MAC_BYTES)).slice(0, MAC_LENGTH);
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32, no padding. */
export function base32(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}
