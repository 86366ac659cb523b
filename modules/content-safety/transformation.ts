import { createHash } from 'node:crypto';
import type { ContentDirection, Finding, FindingType } from './finding.js';
import { FindingCounts } from './finding-counts.js';
import type { TokenVault } from './token-vault.js';

/** The irreversible marker `mask` writes in place of a finding: its kind, nothing of its value. */
export function maskMarker(type: FindingType): string {
  if (type.startsWith('custom:')) return `[CUSTOM:${type.slice('custom:'.length)}]`;
  return MARKERS[type] ?? '[REDACTED]';
}

const MARKERS: Record<string, string> = {
  email: '[EMAIL]', phone: '[PHONE]', card: '[CARD]', iban: '[IBAN]', national_id: '[NATIONAL_ID]', ip_address: '[IP_ADDRESS]',
  secret: '[SECRET]', deny_terms: '[DENIED_TERM]', prompt_injection: '[PROMPT_INJECTION]',
};

export interface TransformContext {
  direction: ContentDirection;
  /** Needed when a finding is to be tokenized; the request's vault (request or session scope). */
  vault?: TokenVault;
  /** Where counts accumulate across the texts of one request (a fresh tally when omitted). */
  counts?: FindingCounts;
}

export interface TransformResult {
  /** The text to send on (unchanged when blocked: it must not be sent at all). */
  text: string;
  counts: FindingCounts;
  /** The type of the first finding whose action is `block`, or null: the caller rejects, naming the type, never the value. */
  blocked: FindingType | null;
}

/**
 * Applies each finding's action to `text` (findings as `scan` returns them: in order, not overlapping): `mask` writes
 * the type's marker, `tokenize` the vault's placeholder, `log` leaves the text and counts it, `block` stops and
 * returns the type. Every finding is counted per (type, direction, action).
 */
export function transform(text: string, findings: readonly Finding[], context: TransformContext): TransformResult {
  const counts = context.counts ?? new FindingCounts();
  if (findings.length === 0) return { text, counts, blocked: null };
  const blocking = findings.find((finding) => finding.action === 'block');
  if (blocking) {
    for (const finding of findings) counts.add(finding.type, context.direction, finding.action);
    return { text, counts, blocked: blocking.type };
  }
  const parts: string[] = [];
  let at = 0;
  for (const finding of findings) {
    counts.add(finding.type, context.direction, finding.action);
    if (finding.action === 'mask') {
      parts.push(text.slice(at, finding.start), maskMarker(finding.type));
      at = finding.end;
    } else if (finding.action === 'tokenize') {
      if (!context.vault) throw new Error('tokenize needs the request\'s token vault');
      parts.push(text.slice(at, finding.start), context.vault.tokenize(finding.type, text.slice(finding.start, finding.end)));
      at = finding.end;
    }
  }
  if (at === 0) return { text, counts, blocked: null };
  parts.push(text.slice(at));
  return { text: parts.join(''), counts, blocked: null };
}

/** The digest a manifest records for a transformed text: sha256, hex. Identifies content without holding it. */
export function contentDigest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
