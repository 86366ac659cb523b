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
    let validations = 0;
    eachMatch(this.candidates, scanText.text, (match, offset) => {
      if (!phoneShaped(match[0])) return;
      const at = offset + match.index;
      // Past the budget a phone-shaped candidate counts as a phone unvalidated: over-masking, never a leak, and a
      // text of endless phone-shaped digits costs bounded time.
      if (++validations > MAX_VALIDATIONS_PER_SCAN) return emit(at, at + match[0].length);
      for (const found of findPhoneNumbersInText(match[0], { defaultCountry: this.defaultRegion })) emit(at + found.startsAt, at + found.endsAt);
    }, scanText.numericWindows());
  }
}

/** libphonenumber calls one scan may make (each costs up to ~0.5 ms). */
const MAX_VALIDATIONS_PER_SCAN = 2_000;

/** 2026-12-18, 18.12.2026, 12/18/2026: dates, which libphonenumber may take for national numbers. */
const DATE = /^(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4})$/;

/**
 * Whether a candidate is grouped the way phone numbers are written, before libphonenumber (slow) is asked: with a
 * leading `+`, 8–15 digits and at most one one-digit group after the country code; otherwise at most 12 digits in at
 * most 5 groups, one separator used throughout (after an optional `(area)`), and no group of a
 * single digit. Dates and lists of numbers (`2026-12-18`, `2026-12-8 242`, `17.53 2026-9-24`) fail this and cost nothing.
 */
export function phoneShaped(candidate: string): boolean {
  const groups = candidate.split(/\D+/).filter((group) => group.length > 0);
  const digits = groups.reduce((sum, group) => sum + group.length, 0);
  if (candidate.startsWith('+')) {
    // E.164: at most 15 digits; one short group besides the country code (`+33 6 12 34 56 78`), no more.
    return digits >= 8 && digits <= 15 && groups.length <= 7 && groups.slice(1).filter((group) => group.length === 1).length <= 1;
  }
  if (digits > 12 || groups.length > 5 || DATE.test(candidate)) return false;
  const body = candidate.replace(/^\(\d{2,4}\)\s?/, '');
  const separators = new Set(body.match(/[^\d]+/g) ?? []);
  if (separators.size > 1) return false;
  const [separator] = separators;
  if (separator !== undefined && !/^[ .-]$/.test(separator)) return false;
  return body.split(/\D+/).every((group) => group.length >= 2);
}
