import type { FindingSeverity } from '../finding.js';
import { type Detector, type EmitFinding, eachMatch } from './detector.js';
import type { ScanText } from './scan-text.js';

/** One documented heuristic (docs/content-safety-detectors.md lists them): a name, how sure it is, its pattern. */
export interface PromptInjectionHeuristic {
  id: string;
  severity: FindingSeverity;
  pattern: string;
}

/**
 * Prompt-injection heuristics, version `prompt_injection/1` (seed 003 §12 and §16): the techniques attackers use to
 * make a model drop its instructions. Phrases, not a classifier: they catch the common forms and miss paraphrases.
 * Severity grades how rarely the phrase is innocent: `high` (instruction override, system-prompt exfiltration,
 * chat-template delimiters), `medium` (role override, jailbreak modes), `low` (a jailbreak word alone).
 */
export const PROMPT_INJECTION_HEURISTICS: readonly PromptInjectionHeuristic[] = [
  {
    id: 'ignore-instructions', severity: 'high',
    pattern: String.raw`\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|the|your|my|every|of)\s+){0,3}(?:previous|prior|above|earlier|preceding|former|original|initial|system)\s+(?:instructions?|prompts?|rules|directions|guidelines|messages?|context)\b`,
  },
  { id: 'ignore-the-above', severity: 'high', pattern: String.raw`\b(?:ignore|disregard)\s+(?:all\s+|everything\s+)?(?:the\s+)?(?:above|foregoing)\b` },
  { id: 'forget-everything', severity: 'high', pattern: String.raw`\bforget\s+(?:everything|all)\s+(?:above|before|you\s+(?:were|have\s+been)\s+told)\b` },
  {
    id: 'system-prompt-exfiltration', severity: 'high',
    pattern: String.raw`\b(?:reveal|show|print|repeat|output|display|leak|dump|tell\s+me|what\s+(?:is|are|was|were))\s+(?:me\s+)?(?:your|the)\s+(?:(?:full|entire|original|hidden|initial|exact|secret)\s+)?(?:system\s+(?:prompt|message|instructions)|initial\s+instructions|hidden\s+instructions|instructions\s+above)\b`,
  },
  {
    id: 'chat-template-delimiter', severity: 'high',
    pattern: String.raw`<\/?(?:system|assistant|im_start|im_end)>|<\|(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|>|\[\/?(?:INST|SYS)\]|<<\/?SYS>>`,
  },
  { id: 'role-header', severity: 'high', pattern: String.raw`(?:^|\n)[ \t]*#{2,}[ \t]*(?:system|assistant|instructions?)[ \t]*:` },
  { id: 'new-instructions', severity: 'medium', pattern: String.raw`\b(?:new|updated|real|actual|override)\s+(?:system\s+)?instructions\s*:|\bsystem\s+prompt\s*:` },
  {
    id: 'role-override', severity: 'medium',
    pattern: String.raw`\byou\s+are\s+now\s+(?:a|an|in|DAN|no\s+longer|free)\b|\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must)\b|\bpretend\s+(?:to\s+be|you\s+are)\b|\bact\s+as\s+if\s+you\s+have\s+no\s+(?:restrictions|rules|limits|filters|guidelines)\b`,
  },
  { id: 'override-settings', severity: 'medium', pattern: String.raw`\boverride\s+(?:your|the|all)\s+(?:settings|safety|guidelines|rules|restrictions|programming)\b` },
  { id: 'jailbreak-mode', severity: 'medium', pattern: String.raw`\b(?:DAN\s+mode|developer\s+mode\s+(?:enabled|on)|do\s+anything\s+now|unfiltered\s+mode|no[\s-]restrictions\s+mode)\b` },
  { id: 'jailbreak-word', severity: 'low', pattern: String.raw`\bjailbr(?:eak|oken)\b` },
];

/** Long base64 runs: decoded and checked against the heuristics above (instructions smuggled in an encoding). */
const ENCODED_BLOB = /(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=])/g;
const MAX_DECODED_BLOB = 8_192;

/**
 * Findings for every heuristic match, graded by the heuristic's severity, and for base64 blobs whose decoded text
 * matches one (severity `high`, id `encoded-instructions`). All heuristics are one alternation, one pass.
 */
export class PromptInjectionDetector implements Detector {
  readonly type = 'prompt_injection' as const;
  readonly version = 'prompt_injection/1';
  private readonly combined = new RegExp(PROMPT_INJECTION_HEURISTICS.map((heuristic) => `(${heuristic.pattern})`).join('|'), 'gi');
  private readonly blobs = new RegExp(ENCODED_BLOB.source, ENCODED_BLOB.flags);

  detect({ text }: ScanText, emit: EmitFinding): void {
    eachMatch(this.combined, text, (match, offset) => {
      const which = match.findIndex((group, index) => index > 0 && group !== undefined);
      emit(offset + match.index, offset + match.index + match[0].length, PROMPT_INJECTION_HEURISTICS[which - 1].severity);
    });
    eachMatch(this.blobs, text, (match, offset) => {
      if (match[0].length > MAX_DECODED_BLOB * 4 / 3) return;
      const decoded = Buffer.from(match[0], 'base64').toString('latin1');
      if (!/^[\x09\x0a\x0d\x20-\x7e]+$/.test(decoded)) return; // binary, not text
      this.combined.lastIndex = 0;
      if (this.combined.test(decoded)) emit(offset + match.index, offset + match.index + match[0].length, 'high');
    });
  }
}
