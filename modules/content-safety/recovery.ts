import { PLACEHOLDER_PREFIX, placeholderPrefixAt } from './placeholder.js';
import type { TokenVault } from './token-vault.js';

/** What recovering a text did: placeholders given back their values, and those left as they were. */
export interface RecoveryTally {
  resolved: number;
  /** Exact placeholders that did not resolve (forged, altered MAC, other scope, expired) and `[PII1_` near misses. */
  unresolved: number;
}

export interface RecoveredText extends RecoveryTally {
  text: string;
}

/**
 * How a recovered value is written into the channel: as is (`text`: message text), or escaped for the inside of a
 * JSON string (`json`: tool-call arguments, where a value with a quote, a backslash or a newline would otherwise
 * break the JSON). Vault values are plain text: tokenize a JSON document's string values after parsing it.
 */
export type RecoveryEncoding = 'text' | 'json';

export function encodeRecovered(value: string, encoding: RecoveryEncoding): string {
  return encoding === 'json' ? JSON.stringify(value).slice(1, -1) : value;
}

/**
 * Replaces each exact placeholder the vault resolves with its value. Never fuzzy: anything else that looks like a
 * placeholder stays as it is (`leave-masked`) and is counted unresolved; under `reject-buffered` the caller fails the
 * request when `unresolved > 0`.
 */
export function recoverText(text: string, vault: TokenVault, encoding: RecoveryEncoding = 'text'): RecoveredText {
  if (!text.includes(PLACEHOLDER_PREFIX)) return { text, resolved: 0, unresolved: 0 };
  const parts: string[] = [];
  let copied = 0;
  let resolved = 0;
  let unresolved = 0;
  for (let at = text.indexOf(PLACEHOLDER_PREFIX); at !== -1; at = text.indexOf(PLACEHOLDER_PREFIX, at + 1)) {
    const length = placeholderPrefixAt(text, at);
    if (length <= 0) { unresolved++; continue; } // a near miss (cut or altered grammar) stays as is
    const value = vault.resolve(text.slice(at, at + length));
    if (value === undefined) { unresolved++; continue; }
    parts.push(text.slice(copied, at), encodeRecovered(value, encoding));
    copied = at + length;
    resolved++;
    at = copied - 1;
  }
  if (resolved === 0) return { text, resolved, unresolved };
  parts.push(text.slice(copied));
  return { text: parts.join(''), resolved, unresolved };
}
