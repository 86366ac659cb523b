import { placeholderPrefixAt } from './placeholder.js';
import { type RecoveryEncoding, type RecoveryTally, encodeRecovered } from './recovery.js';
import type { TokenVault } from './token-vault.js';

/**
 * Recovers placeholders in one streamed text channel (a choice's text, one tool call's arguments): a state machine fed
 * the decoded deltas in order. It holds back only what may still become a placeholder — from a `[` whose following
 * characters fit the grammar so far, at most MAX_PLACEHOLDER_LENGTH - 1 characters — and a high surrogate whose low
 * half has not come yet; every other character is released at once. The output of any chunking equals
 * `recoverText` of the whole text.
 */
export class PlaceholderRecoveryStream implements RecoveryTally {
  resolved = 0;
  unresolved = 0;
  private pending = '';

  constructor(private readonly vault: TokenVault, private readonly encoding: RecoveryEncoding = 'text') {}

  /** The text that can be released now that `chunk` has come. */
  push(chunk: string): string {
    if (chunk.length === 0) return '';
    const text = this.pending + chunk;
    // Fast path: no `[` anywhere and nothing held — release all but a trailing high surrogate.
    if (this.pending.length === 0 && !chunk.includes('[')) return this.keepTrailingSurrogate(text);
    return this.process(text, false);
  }

  /** The rest, at the end of the channel: whatever was held is released as it is (an incomplete placeholder cannot resolve). */
  end(): string {
    const rest = this.pending;
    this.pending = '';
    return rest.length === 0 ? '' : this.process(rest, true);
  }

  private process(text: string, final: boolean): string {
    const parts: string[] = [];
    let copied = 0;
    for (let at = text.indexOf('['); at !== -1; at = text.indexOf('[', at + 1)) {
      const length = placeholderPrefixAt(text, at);
      if (length === 0) {
        if (!final) {
          parts.push(text.slice(copied, at));
          this.pending = text.slice(at);
          return parts.join('');
        }
        if (text.startsWith('[PII1_', at)) this.unresolved++;
        continue;
      }
      if (length < 0) {
        if (text.startsWith('[PII1_', at)) this.unresolved++;
        continue;
      }
      const value = this.vault.resolve(text.slice(at, at + length));
      if (value === undefined) {
        this.unresolved++;
        continue;
      }
      parts.push(text.slice(copied, at), encodeRecovered(value, this.encoding));
      copied = at + length;
      this.resolved++;
      at = copied - 1;
    }
    this.pending = '';
    const rest = text.slice(copied);
    if (final) {
      parts.push(rest);
      return parts.join('');
    }
    parts.push(this.keepTrailingSurrogate(rest));
    return parts.join('');
  }

  /** Releases `text` except a last high surrogate, held until its pair arrives (a lone half would be mangled downstream). */
  private keepTrailingSurrogate(text: string): string {
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.pending = text.slice(-1);
      return text.slice(0, -1);
    }
    this.pending = '';
    return text;
  }
}
