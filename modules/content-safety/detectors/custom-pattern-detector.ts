import type { Detector, EmitFinding } from './detector.js';
import { eachMatch } from './detector.js';
import type { ScanText } from './scan-text.js';
import { CUSTOM_PATTERN_FLAGS } from '../custom-pattern-safety.js';

/**
 * An operator's own pattern from a policy (`custom: [{ name, pattern, action }]`). The policy's validation refuses a
 * pattern that can backtrack catastrophically before it is ever compiled here; this detector only runs it.
 */
export class CustomPatternDetector implements Detector {
  readonly type: `custom:${string}`;
  readonly version: string;
  private readonly pattern: RegExp;

  constructor(name: string, pattern: string) {
    this.type = `custom:${name}`;
    // The flags the validation parsed and analysed it with (Unicode-aware): what was checked is what runs.
    this.pattern = new RegExp(pattern, CUSTOM_PATTERN_FLAGS);
    this.version = `custom/1 ${name}`;
  }

  detect({ text }: ScanText, emit: EmitFinding): void {
    eachMatch(this.pattern, text, (match, offset) => emit(offset + match.index, offset + match.index + match[0].length));
  }
}
