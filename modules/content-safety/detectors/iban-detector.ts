import { type Detector, type EmitFinding, eachMatch } from './detector.js';
import type { ScanText } from './scan-text.js';

/** IBAN lengths by country (the SWIFT IBAN registry): a candidate is cut to its country's length before the checksum. */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29, BY: 28, CH: 21, CR: 22, CY: 28,
  CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FK: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23,
  GL: 18, GR: 27, GT: 28, HN: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28,
  LC: 32, LI: 21, LT: 20, LU: 20, LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19, MN: 20, MR: 27, MT: 31, MU: 30, NI: 28,
  NL: 18, NO: 15, OM: 23, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, RU: 33, SA: 24, SC: 31, SD: 18, SE: 24,
  SI: 19, SK: 24, SM: 27, SO: 23, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20, YE: 30,
};

/**
 * International bank account numbers: a registry country code, two check digits and the country's length of
 * letters and digits (in print, groups of four separated by spaces), passing the ISO 7064 mod-97 check.
 */
export class IbanDetector implements Detector {
  readonly type = 'iban' as const;
  readonly version = 'iban/1';
  // No lookbehind first: a pattern starting with its letters lets the engine skip ahead; the start is checked after.
  private readonly pattern = /[A-Z]{2}\d{2}(?:[ ]?[A-Za-z0-9]){11,30}/g;

  detect(scanText: ScanText, emit: EmitFinding): void {
    eachMatch(this.pattern, scanText.text, (match, offset) => {
      const candidate = match[0];
      if (isAlphanumeric(scanText.text.charCodeAt(offset + match.index - 1))) return;
      const length = IBAN_LENGTHS[candidate.slice(0, 2)];
      if (!length) return;
      // Take exactly `length` letters and digits: the candidate may run on into the next word.
      let compact = '';
      let end = 0;
      while (end < candidate.length && compact.length < length) {
        const char = candidate[end++];
        if (char !== ' ') compact += char.toUpperCase();
      }
      if (compact.length !== length) return;
      const next = candidate.charCodeAt(end);
      if (end < candidate.length && next !== 0x20) return; // an IBAN ends at a group boundary, not inside a word
      if (end === candidate.length && isAlphanumeric(scanText.text.charCodeAt(offset + match.index + end))) return;
      if (!mod97Valid(compact)) return;
      emit(offset + match.index, offset + match.index + end);
    }, scanText.numericWindows());
  }
}

function isAlphanumeric(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/** ISO 7064 mod 97-10 over the rearranged IBAN (the first four characters moved to the end, letters as 10–35). */
export function mod97Valid(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (let i = 0; i < rearranged.length; i++) {
    const code = rearranged.charCodeAt(i);
    if (code >= 0x30 && code <= 0x39) remainder = (remainder * 10 + (code - 0x30)) % 97;
    else if (code >= 0x41 && code <= 0x5a) remainder = (remainder * 100 + (code - 0x41 + 10)) % 97;
    else return false;
  }
  return remainder === 1;
}
