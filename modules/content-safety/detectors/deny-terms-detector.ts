import { type Detector, type EmitFinding, eachMatch } from './detector.js';
import type { ScanText } from './scan-text.js';

/**
 * Deny-listed terms: case-insensitive, whole words (a term is not found inside a longer word), any run of
 * whitespace between a term's words. All terms are one alternation, longest first, so the text is scanned once
 * whatever the number of terms.
 */
export class DenyTermsDetector implements Detector {
  readonly type = 'deny_terms' as const;
  readonly version = 'deny_terms/1';
  private readonly pattern: RegExp | null;

  constructor(terms: readonly string[]) {
    const words = [...new Set(terms.map((term) => term.trim().toLowerCase()).filter((term) => term.length > 0))]
      .sort((a, b) => b.length - a.length || (a < b ? -1 : 1))
      .map((term) => term.split(/\s+/).map(escapeRegExp).join('\\s+'));
    // The start boundary is checked after a match, not as a lookbehind: a pattern starting with the terms themselves
    // lets the regex engine skip ahead by their first characters.
    this.pattern = words.length === 0 ? null : new RegExp(`(?:${words.join('|')})(?![\\p{L}\\p{N}_])`, 'giu');
  }

  detect({ text }: ScanText, emit: EmitFinding): void {
    if (!this.pattern) return;
    eachMatch(this.pattern, text, (match, offset) => {
      const start = offset + match.index;
      if (start > 0 && WORD_CHAR.test(text.slice(Math.max(0, start - 2), start))) return;
      emit(start, start + match[0].length);
    });
  }
}

/** A letter, digit or underscore ending the text before a match (two code units: a surrogate pair is one letter). */
const WORD_CHAR = /[\p{L}\p{N}_]$/u;

function escapeRegExp(text: string): string {
  // The syntax characters only: under the `u` flag any other escaped character is an error (`-` is literal here).
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
