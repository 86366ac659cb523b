import { createHash } from 'node:crypto';
import { randomBase62 } from '../../../src/kernel/index.js';

/** `sk-sy-` + 32 base62 characters: about 190 bits of entropy. */
export const KEY_PATTERN = /^sk-sy-[0-9A-Za-z]{32}$/;

export function generateApiKey(): string {
  return `sk-sy-${randomBase62(32)}`;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** What operators see instead of the key: enough to recognise it, useless to an attacker. */
export function displayPrefix(key: string): string {
  return `${key.slice(0, 10)}…`;
}

