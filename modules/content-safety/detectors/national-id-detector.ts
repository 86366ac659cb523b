import { type Detector, type EmitFinding, eachMatch } from './detector.js';
import type { ScanText } from './scan-text.js';

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';
/** Two-letter NINO prefixes HMRC never issues. */
const NINO_NOT_ISSUED = new Set(['BG', 'GB', 'NK', 'KN', 'TN', 'NT', 'ZZ']);

/**
 * National identity numbers the content log has always known, now validated:
 * - US social security numbers written `123-45-6789` (or with spaces), without the ranges never issued: area 000,
 *   666 and 900–999, group 00, serial 0000;
 * - UK national insurance numbers (`AB 12 34 56 C`), without the prefixes never issued;
 * - Spanish DNI (8 digits and the check letter, mod 23) and NIE (X, Y or Z, 7 digits and the check letter).
 */
export class NationalIdDetector implements Detector {
  readonly type = 'national_id' as const;
  readonly version = 'national_id/1 us-ssn uk-nino es-dni-nie';
  private readonly ssn = /(?<![\d-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\d-])/g;
  private readonly nino = /\b([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/g;
  private readonly dni = /\b([XYZ]?)(\d{7,8})-?([A-Z])\b/g;

  detect(scanText: ScanText, emit: EmitFinding): void {
    const windows = scanText.numericWindows();
    const text = scanText.text;
    eachMatch(this.ssn, text, (match, offset) => {
      if (validSsn(match[1], match[3], match[4])) emit(offset + match.index, offset + match.index + match[0].length);
    });
    eachMatch(this.nino, text, (match, offset) => {
      if (!NINO_NOT_ISSUED.has(match[1])) emit(offset + match.index, offset + match.index + match[0].length);
    }, windows);
    eachMatch(this.dni, text, (match, offset) => {
      if (validDniOrNie(match[1], match[2], match[3])) emit(offset + match.index, offset + match.index + match[0].length);
    }, windows);
  }
}

export function validSsn(area: string, group: string, serial: string): boolean {
  return area !== '000' && area !== '666' && area[0] !== '9' && group !== '00' && serial !== '0000';
}

export function validDniOrNie(niePrefix: string, digits: string, letter: string): boolean {
  if (niePrefix) {
    if (digits.length !== 7) return false;
    return DNI_LETTERS[Number('XYZ'.indexOf(niePrefix) + digits) % 23] === letter;
  }
  if (digits.length !== 8) return false;
  return DNI_LETTERS[Number(digits) % 23] === letter;
}
