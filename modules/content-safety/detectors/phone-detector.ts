import { type CountryCode, findPhoneNumbersInText } from 'libphonenumber-js';
import { type Detector, type EmitFinding, eachMatch } from './detector.js';
import type { ScanText } from './scan-text.js';

/** The libphonenumber-js release whose metadata decides what a valid number is (a test checks it is the one installed). */
export const LIBPHONENUMBER_VERSION = '1.13.16';

/**
 * Phone numbers: international numbers (`+` and a country code) of any country, and national numbers of the default
 * region (US unless the engine is told otherwise), that libphonenumber-js finds valid for their country — not
 * any run of digits. libphonenumber only sees short candidates (a digit run of 7–17 digits with phone separators,
 * at most ~50 characters) cut from the numeric windows, so its cost stays bounded on hostile input.
 */
export class PhoneDetector implements Detector {
  readonly type = 'phone' as const;
  readonly version: string;
  private readonly candidates = /(?<![\w+])(?:\+|\()?\d(?:[ .()/-]{0,2}\d){6,16}(?!\d)/g;

  constructor(private readonly defaultRegion: CountryCode = 'US') {
    this.version = `phone/1 libphonenumber-js@${LIBPHONENUMBER_VERSION} valid default=${defaultRegion}`;
  }

  detect(scanText: ScanText, emit: EmitFinding): void {
    eachMatch(this.candidates, scanText.text, (match, offset) => {
      const at = offset + match.index;
      for (const found of findPhoneNumbersInText(match[0], { defaultCountry: this.defaultRegion })) emit(at + found.startsAt, at + found.endsAt);
    }, scanText.numericWindows());
  }
}
