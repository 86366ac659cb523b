import { type BuiltInFindingType, type ContentAction, CONTENT_ACTION_STRICTNESS as ACTION_STRICTNESS, stricterAction } from '../../events/index.js';

/** What a finding is: a built-in detector's name, `custom:<name>` for an operator's pattern, `deny_terms`, or a remote check's kind. */
export type FindingType = BuiltInFindingType | `custom:${string}` | 'deny_terms' | 'webhook' | 'moderation';

/** How confident a heuristic is that a finding is what it looks like (prompt-injection heuristics grade theirs). */
export type FindingSeverity = 'low' | 'medium' | 'high';

/** Where content was: sent by the client (input) or produced by the model (output). */
export type ContentDirection = 'input' | 'output';

/** One span of text a detector matched, with the action the policy gives it. Offsets are UTF-16 code units of the scanned string. */
export interface Finding {
  type: FindingType;
  start: number;
  end: number;
  action: ContentAction;
  severity?: FindingSeverity;
}

/** Strictness order when findings overlap or policies combine: the event contract's (block > mask > tokenize > log > allow). */
export { ACTION_STRICTNESS, stricterAction };

/**
 * Findings that do not overlap, in text order: where two overlap, the strictest action wins, then the longest span,
 * then the earliest start, then the type name (so the result never depends on detector order).
 */
export function resolveOverlaps(findings: Finding[]): Finding[] {
  if (findings.length < 2) return findings.slice();
  const byStart = findings.slice().sort((a, b) => a.start - b.start || b.end - a.end);
  let overlapping = false;
  for (let i = 1; i < byStart.length; i++) if (byStart[i].start < byStart[i - 1].end) { overlapping = true; break; }
  if (!overlapping) return byStart;
  const ranked = findings.slice().sort((a, b) =>
    ACTION_STRICTNESS[b.action] - ACTION_STRICTNESS[a.action]
    || (b.end - b.start) - (a.end - a.start)
    || a.start - b.start
    || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
  // Accepted spans stay sorted by start and disjoint, so one binary search per candidate finds its neighbours.
  const accepted: Finding[] = [];
  for (const candidate of ranked) {
    let low = 0;
    let high = accepted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (accepted[middle].start < candidate.start) low = middle + 1;
      else high = middle;
    }
    const before = accepted[low - 1];
    const after = accepted[low];
    if (before && before.end > candidate.start) continue;
    if (after && after.start < candidate.end) continue;
    accepted.splice(low, 0, candidate);
  }
  return accepted;
}
