import type { FindingSeverity } from '../finding.js';
import { type Detector, type EmitFinding, eachMatch } from './detector.js';
import type { ScanText, Window } from './scan-text.js';

/** One documented heuristic (docs/content-safety-detectors.md lists them): a name, how sure it is, its pattern. */
export interface PromptInjectionHeuristic {
  id: string;
  severity: FindingSeverity;
  pattern: string;
  /** Searched for only around ANCHOR words (every match of the pattern holds one); false: searched everywhere. */
  anchored: boolean;
}

/**
 * Prompt-injection heuristics, version `prompt_injection/1` (seed 003 §12 and §16): the techniques attackers use to
 * make a model drop its instructions. Phrases, not a classifier: they catch the common forms and miss paraphrases.
 * Severity grades how rarely the phrase is innocent: `high` (instruction override, system-prompt exfiltration,
 * chat-template delimiters), `medium` (role override, jailbreak modes), `low` (a jailbreak word alone).
 */
export const PROMPT_INJECTION_HEURISTICS: readonly PromptInjectionHeuristic[] = [
  {
    id: 'ignore-instructions', severity: 'high', anchored: true,
    pattern: String.raw`\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|the|your|my|every|of)\s+){0,3}(?:previous|prior|above|earlier|preceding|former|original|initial|system)\s+(?:instructions?|prompts?|rules|directions|guidelines|messages?|context)\b`,
  },
  { id: 'ignore-the-above', severity: 'high', anchored: true, pattern: String.raw`\b(?:ignore|disregard)\s+(?:all\s+|everything\s+)?(?:the\s+)?(?:above|foregoing)\b` },
  { id: 'forget-everything', severity: 'high', anchored: true, pattern: String.raw`\bforget\s+(?:everything|all)\s+(?:above|before|you\s+(?:were|have\s+been)\s+told)\b` },
  {
    id: 'system-prompt-exfiltration', severity: 'high', anchored: true,
    pattern: String.raw`\b(?:reveal|show|print|repeat|output|display|leak|dump|tell\s+me|what\s+(?:is|are|was|were))\s+(?:me\s+)?(?:your|the)\s+(?:(?:full|entire|original|hidden|initial|exact|secret)\s+)?(?:system\s+(?:prompt|message|instructions)|initial\s+instructions|hidden\s+instructions|instructions\s+above)\b`,
  },
  {
    id: 'chat-template-delimiter', severity: 'high', anchored: false,
    pattern: String.raw`<\/?(?:system|assistant|im_start|im_end)>|<\|(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|>|\[\/?(?:INST|SYS)\]|<<\/?SYS>>`,
  },
  // Starts with a literal `#` (the line start is checked by a lookbehind after it): the engine skips ahead to each `#`.
  { id: 'role-header', severity: 'high', anchored: false, pattern: String.raw`#(?<=(?:^|
)[ 	]*#)#+[ 	]*(?:system|assistant|instructions?)[ 	]*:` },
  { id: 'new-instructions', severity: 'medium', anchored: true, pattern: String.raw`\b(?:new|updated|real|actual|override)\s+(?:system\s+)?instructions\s*:|\bsystem\s+prompt\s*:` },
  {
    id: 'role-override', severity: 'medium', anchored: true,
    pattern: String.raw`\byou\s+are\s+now\s+(?:a|an|in|DAN|no\s+longer|free)\b|\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must)\b|\bpretend\s+(?:to\s+be|you\s+are)\b|\bact\s+as\s+if\s+you\s+have\s+no\s+(?:restrictions|rules|limits|filters|guidelines)\b`,
  },
  { id: 'override-settings', severity: 'medium', anchored: true, pattern: String.raw`\boverride\s+(?:your|the|all)\s+(?:settings|safety|guidelines|rules|restrictions|programming)\b` },
  { id: 'jailbreak-mode', severity: 'medium', anchored: true, pattern: String.raw`\b(?:DAN\s+mode|developer\s+mode\s+(?:enabled|on)|do\s+anything\s+now|unfiltered\s+mode|no[\s-]restrictions\s+mode)\b` },
  { id: 'jailbreak-word', severity: 'low', anchored: true, pattern: String.raw`\bjailbr(?:eak|oken)\b` },
];

/**
 * Words every anchored heuristic's match contains (its rarest part): one search for them, then the heuristics run
 * only on the text around each (ANCHOR_BEFORE characters before, ANCHOR_AFTER after, widened to word boundaries).
 */
const ANCHOR_WORDS = [
  'instruction', 'prompt', 'rules', 'directions', 'guidelines', 'message', 'context', 'above', 'foregoing', 'forget', 'system',
  'pretend', 'now\\b', 'act\\s+as', 'override', 'mode\\b', 'anything', 'jailbr',
];
const ANCHORS = anchorPattern(ANCHOR_WORDS);
const ANCHOR_BEFORE = 96;
const ANCHOR_AFTER = 64;

/** Base64 runs this long or longer are decoded and checked against the heuristics (instructions smuggled in an encoding). */
const MIN_BLOB = 24;
const MAX_BLOB = 16_384;

/**
 * Findings for every heuristic match, graded by the heuristic's severity, and for base64 blobs whose decoded text
 * matches one (severity `high`, id `encoded-instructions`). Each heuristic is its own regex (an alternation of all
 * of them defeats the regex engine's literal search); blobs are looked for only around digits (the numeric windows):
 * base64 of a sentence that long has digits in practice, prose does not pay for a character-class scan.
 */
export class PromptInjectionDetector implements Detector {
  readonly type = 'prompt_injection' as const;
  readonly version = 'prompt_injection/1';
  private readonly heuristics = PROMPT_INJECTION_HEURISTICS.map((heuristic) => ({ ...heuristic, regex: new RegExp(heuristic.pattern, 'gi') }));
  private readonly anchors = new RegExp(ANCHORS.source, ANCHORS.flags);

  detect(scanText: ScanText, emit: EmitFinding): void {
    const text = scanText.text;
    const around = this.anchorWindows(text);
    for (const { severity, regex, anchored } of this.heuristics) {
      if (anchored && around.length === 0) continue;
      eachMatch(regex, text, (match, offset) => emit(offset + match.index, offset + match.index + match[0].length, severity), anchored ? around : undefined);
    }
    // Blobs: each digit run widened to the base64 run around it (a run already seen is not walked again).
    const digits = scanText.digitRuns();
    let covered = 0;
    for (let i = 0; i < digits.length; i += 2) {
      if (digits[i + 1] <= covered) continue;
      let from = Math.max(digits[i], covered);
      while (from > covered && digits[i] - from < MAX_BLOB && isBase64(text.charCodeAt(from - 1))) from--; // never back over a run already seen
      let to = digits[i + 1];
      while (to < text.length && to - from < MAX_BLOB && isBase64(text.charCodeAt(to))) to++;
      covered = to;
      if (to - from < MIN_BLOB) continue;
      let padded = to;
      while (padded < text.length && padded - to < 2 && text.charCodeAt(padded) === 0x3d) padded++;
      if (this.encodesInstructions(text.slice(from, padded))) emit(from, padded, 'high');
    }
  }

  private anchorWindows(text: string): Window[] {
    const windows: Array<[number, number]> = [];
    eachMatch(this.anchors, text, (match) => {
      let start = Math.max(0, match.index - ANCHOR_BEFORE);
      while (start > 0 && match.index - start < 2 * ANCHOR_BEFORE && isWordChar(text.charCodeAt(start - 1))) start--;
      let end = Math.min(text.length, match.index + match[0].length + ANCHOR_AFTER);
      while (end < text.length && end - match.index < 2 * ANCHOR_AFTER && isWordChar(text.charCodeAt(end))) end++;
      const last = windows[windows.length - 1];
      if (last && start <= last[1]) last[1] = Math.max(last[1], end);
      else windows.push([start, end]);
    });
    return windows;
  }

  private encodesInstructions(blob: string): boolean {
    const decoded = Buffer.from(blob, 'base64').toString('latin1');
    if (!/^[\x09\x0a\x0d\x20-\x7e]+$/.test(decoded)) return false; // binary, not text
    return this.heuristics.some(({ regex }) => {
      regex.lastIndex = 0;
      return regex.test(decoded);
    });
  }
}

/**
 * The anchor words as one case-insensitive search at word starts, grouped by first letter (`\b(?:a(?:bove|…)|c(?:…)|…)`):
 * the engine then tries one branch per position instead of every word, and only where a word starts — a third of
 * the flat alternation's time on prose (2.8 against 5.9 ms per MB).
 */
function anchorPattern(words: readonly string[]): RegExp {
  const byFirst = new Map<string, string[]>();
  for (const word of words) byFirst.set(word[0], [...(byFirst.get(word[0]) ?? []), word.slice(1)]);
  const branches = [...byFirst].map(([first, rests]) => `${first}(?:${rests.join('|')})`);
  return new RegExp(`\\b(?:${branches.join('|')})`, 'gi');
}

function isWordChar(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x5f;
}

function isBase64(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x2b || code === 0x2f;
}
