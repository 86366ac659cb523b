import { hash } from 'node:crypto';
import { randomBase62 } from '../../../src/kernel/index.js';

/** `sk-sy-` + 32 base62 characters: about 190 bits of entropy. */
export const KEY_PATTERN = /^sk-sy-[0-9A-Za-z]{32}$/;

export function generateApiKey(): string {
  return `sk-sy-${randomBase62(32)}`;
}

/** sha256 of the key, hex. One-shot: no Hash object per request (about 1 µs of the request path). */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** What operators see instead of the key: enough to recognise it, useless to an attacker. */
export function displayPrefix(key: string): string {
  return `${key.slice(0, 10)}…`;
}

