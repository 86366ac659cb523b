import { type Detector, type EmitFinding, eachMatch } from './detector.js';
import { luhnValid } from './luhn.js';
import type { ScanText } from './scan-text.js';

/**
 * Payment card numbers: 13–19 digits, optionally grouped by single spaces or dashes, passing the Luhn check, not one
 * repeated digit (0000 0000 0000 0000 passes Luhn). The pattern starts with a digit: the regex engine skips prose
 * by itself, faster than cutting the text into windows.
 */
export class CardDetector implements Detector {
  readonly type = 'card' as const;
  readonly version = 'card/1';
  private readonly pattern = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g;

  detect(scanText: ScanText, emit: EmitFinding): void {
    eachMatch(this.pattern, scanText.text, (match, offset) => {
      const digits = match[0].replace(/\D/g, '');
      if (/^(\d)\1*$/.test(digits) || !luhnValid(digits)) return;
      emit(offset + match.index, offset + match.index + match[0].length);
    });
  }
}
