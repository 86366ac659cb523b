import type { ContentAction } from '../../events/index.js';
import type { CompiledRules } from './compiled-policy.js';
import { ScanText } from './detectors/scan-text.js';
import { type Finding, type FindingSeverity, resolveOverlaps } from './finding.js';
import { placeholderSpans } from './placeholder.js';

export interface ScanOptions {
  /**
   * Leave exact placeholders alone (output checks): a pattern matching inside `[PII1_…]` would break its recovery,
   * and the value behind a placeholder was the client's own.
   */
  protectPlaceholders?: boolean;
}

/**
 * Every finding of the compiled rules in `text`, overlaps resolved (strictest action, then longest), in text order.
 * Prompt-injection findings of `low` severity are recorded (`log`) but never masked or blocked.
 */
export function scan(text: string, compiled: CompiledRules, options: ScanOptions = {}): Finding[] {
  if (compiled.rules.length === 0 || text.length === 0) return [];
  const scanText = new ScanText(text);
  const findings: Finding[] = [];
  for (const { detector, action } of compiled.rules) {
    const type = detector.type;
    detector.detect(scanText, (start, end, severity) => {
      findings.push(severity ? { type, start, end, action: actionFor(action, severity), severity } : { type, start, end, action });
    });
  }
  const kept = options.protectPlaceholders ? outsidePlaceholders(text, findings) : findings;
  return resolveOverlaps(kept);
}

function actionFor(action: ContentAction, severity: FindingSeverity): ContentAction {
  return severity === 'low' ? 'log' : action;
}

function outsidePlaceholders(text: string, findings: Finding[]): Finding[] {
  if (findings.length === 0) return findings;
  const spans = placeholderSpans(text); // in text order, disjoint
  if (spans.length === 0) return findings;
  // Each finding against the spans around its start (binary search): linear-logarithmic however many of both.
  return findings.filter((finding) => {
    let low = 0;
    let high = spans.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (spans[middle][1] <= finding.start) low = middle + 1;
      else high = middle;
    }
    // spans[low] is the first span ending after the finding's start: they overlap when it starts before the finding ends.
    return low === spans.length || spans[low][0] >= finding.end;
  });
}
