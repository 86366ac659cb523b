import type { FindingType } from './finding.js';
import type { PlaceholderKeys } from './placeholder-keys.js';
import { makePlaceholder, type TokenScope, typeCode } from './placeholder.js';

/**
 * The mapping between placeholders and values of one scope, held by the request. Tokenizing and resolving are
 * synchronous (a stream recovers without waiting): a session vault loads what the request references before the
 * answer starts. Resolution is exact: the MAC must verify for this vault's scope and the mapping must be held —
 * nothing else is ever looked up.
 */
export abstract class TokenVault {
  protected readonly values = new Map<string, string>();
  private readonly placeholders = new Map<string, string>();
  /** Placeholders made since the last `takeNew()` (a session vault writes them to Redis). */
  private fresh: string[] = [];

  constructor(protected readonly keys: PlaceholderKeys, readonly scope: TokenScope) {}

  /** The placeholder for `value`: the same one every time within this scope. */
  tokenize(type: FindingType, value: string): string {
    const key = `${typeCode(type)}\u0000${value}`;
    const known = this.placeholders.get(key);
    if (known) return known;
    const placeholder = makePlaceholder(this.keys, this.scope, type, value);
    this.placeholders.set(key, placeholder);
    this.values.set(placeholder, value);
    this.fresh.push(placeholder);
    return placeholder;
  }

  /**
   * The value behind an exact placeholder of this scope, or undefined (forged, altered, other scope, unknown, expired).
   * The map holds only placeholders this vault made or loaded after verifying their MAC, keyed by the exact string:
   * a hit is authentic, a miss is never looked up anywhere else.
   */
  resolve(placeholder: string): string | undefined {
    return this.values.get(placeholder);
  }

  /** How many mappings the vault holds. */
  get size(): number {
    return this.values.size;
  }

  /** Forgets every mapping (the request is over). */
  clear(): void {
    this.values.clear();
    this.placeholders.clear();
    this.fresh = [];
  }

  protected takeNew(): string[] {
    const fresh = this.fresh;
    this.fresh = [];
    return fresh;
  }

  /** Adds a mapping read back from durable storage (already verified and decrypted). */
  protected remember(placeholder: string, value: string): void {
    this.values.set(placeholder, value);
  }
}
