import type { CompiledRules } from './compiled-policy.js';
import type { FindingType } from './finding.js';
import { FindingCounts } from './finding-counts.js';
import { type RecoveryEncoding, recoverText } from './recovery.js';
import { readingForms } from './reading-form.js';
import { scan } from './scanner.js';
import type { TokenVault } from './token-vault.js';
import { transform } from './transformation.js';

export interface TextPolicyContext {
  rules: CompiledRules;
  vault?: TokenVault;
  counts?: FindingCounts;
  /** Output only: `json` when the text is tool-call arguments (recovered values escaped for a JSON string). */
  encoding?: RecoveryEncoding;
}

export interface InputResult {
  text: string;
  blocked: FindingType | null;
  counts: FindingCounts;
}

export interface OutputResult extends InputResult {
  resolved: number;
  unresolved: number;
}

/**
 * One input text (a message, a content part, tool arguments or a tool result): scanned and transformed. Placeholders
 * already in it (a session's history) are left whole: a pattern matching inside one would break it. A text that reads
 * differently to a model than to the detectors (reading-form.ts: fullwidth digits, invisible characters, lookalike
 * letters) is scanned in its reading forms too; the first that shows more is what goes on, checked — the model reads
 * the same words either way, and the hidden value is then blocked, masked or tokenized like any other.
 */
export function applyInputPolicy(text: string, context: TextPolicyContext): InputResult {
  const transforming = { direction: 'input' as const, vault: context.vault, counts: context.counts };
  const found = scan(text, context.rules, { protectPlaceholders: true });
  for (const reading of readingForms(text)) {
    const foundReading = scan(reading, context.rules, { protectPlaceholders: true });
    if (foundReading.length > found.length) return transform(reading, foundReading, transforming);
  }
  return transform(text, found, transforming);
}

/**
 * One whole output text (a buffered answer): the model's own text is checked first — placeholders are left out of
 * the scan, since what they stand for was the client's own — then placeholders are recovered. A block returns the
 * type and recovers nothing.
 */
export function applyOutputPolicy(text: string, context: TextPolicyContext): OutputResult {
  const counts = context.counts ?? new FindingCounts();
  const checked = transform(text, scan(text, context.rules, { protectPlaceholders: true }), { direction: 'output', counts });
  if (checked.blocked || !context.vault) return { ...checked, resolved: 0, unresolved: 0 };
  const recovered = recoverText(checked.text, context.vault, context.encoding);
  return { text: recovered.text, blocked: null, counts, resolved: recovered.resolved, unresolved: recovered.unresolved };
}
