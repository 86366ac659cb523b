import { createHash } from 'node:crypto';
import { type CountryCode, Metadata, parsePhoneNumberFromString } from 'libphonenumber-js';
import { type Detector, type EmitFinding, eachMatch } from './detector.js';
import type { ScanText } from './scan-text.js';

/** The libphonenumber-js release whose metadata decides what a valid number is (a test checks it is the one installed). */
export const LIBPHONENUMBER_VERSION = '1.13.16';

/**
 * Phone numbers: international numbers (`+` and a country code) of any country, and national numbers of the default
 * region (US unless the engine is told otherwise), that libphonenumber-js finds valid for their country — not
 * any run of digits. libphonenumber only sees short candidates (a digit run of 7–17 digits with phone separators,
 * at most ~50 characters), so its cost stays bounded on hostile input.
 */
export class PhoneDetector implements Detector {
  readonly type = 'phone' as const;
  readonly version: string;
  private readonly candidates = /(?<![\w+])(?:\+|\()?\d(?:[ .()/-]{0,2}\d){6,16}(?!\d)/g;

  /**
   * libphonenumber's verdicts on recent candidates, by a digest of the candidate (never the number itself): a parse
   * costs 10–40 µs, and chat traffic sends the same numbers again and again (a conversation's history is resent
   * every turn). Bounded; the oldest verdict goes first.
   */
  private readonly verdicts = new Map<string, boolean>();
  /** How many digits a national number of the default region can have, with or without a one-digit trunk prefix. */
  private readonly nationalDigits: ReadonlySet<number>;

  constructor(private readonly defaultRegion: CountryCode = 'US') {
    this.version = `phone/2 libphonenumber-js@${LIBPHONENUMBER_VERSION} valid default=${defaultRegion}`;
    const metadata = new Metadata();
    metadata.selectNumberingPlan(defaultRegion);
    const lengths = metadata.numberingPlan?.possibleLengths() ?? [];
    this.nationalDigits = new Set(lengths.flatMap((length) => [length, length + 1]));
  }

  detect(scanText: ScanText, emit: EmitFinding): void {
    let validations = 0;
    // Past the budget a phone-shaped candidate counts as a phone unvalidated: over-masking, never a leak, and a
    // text of endless phone-shaped digits costs bounded time.
    const isPhone = (candidate: string) => ++validations > MAX_VALIDATIONS_PER_SCAN
      || this.valid(candidate);
    eachMatch(this.candidates, scanText.text, (match, offset) => {
      const candidate = match[0];
      const at = offset + match.index;
      if (phoneShaped(candidate) && isPhone(candidate)) return emit(at, at + candidate.length);
      // Numbers written next to each other (`415-555-0132 415-555-0199`, a list in a table) run into one candidate
      // that is no phone as a whole: take the longest phone its leading digit groups make, and search again right
      // after it — or from the candidate's second group when none — so that the next number is found whole even
      // when the greedy candidate cut it in two.
      const groups = digitGroups(candidate);
      if (groups.length < 2) return;
      const found = leadingPhone(candidate, groups, this.nationalDigits, isPhone);
      if (found > 0) {
        emit(at, at + found);
        this.candidates.lastIndex = match.index + found;
        return;
      }
      // Or a phone at its end, after digits that are none (`2026-12-18 212-555-0123`).
      const from = trailingPhone(candidate, groups, this.nationalDigits, isPhone);
      if (from > 0) emit(at + from, at + candidate.length);
      else if (cutShort(match.input, match.index + candidate.length)) {
        // No phone at its start, but the run of digits goes on past the candidate (a date, then a number): the
        // search goes on from its second group. A whole run that holds no phone (a card number) is done with.
        this.candidates.lastIndex = match.index + groups[1][0];
      }
    });
  }

  /** Whether libphonenumber finds the candidate, as a whole, a valid number (its verdict remembered by digest). */
  private valid(candidate: string): boolean {
    const key = createHash('sha256').update(candidate).digest('base64');
    const known = this.verdicts.get(key);
    if (known !== undefined) return known;
    // The candidate as a whole (its span is the finding): parsing one string is several times cheaper than
    // libphonenumber's own text search, which would only look at this candidate again.
    const verdict = parsePhoneNumberFromString(candidate, { defaultCountry: this.defaultRegion, extract: false })?.isValid() === true;
    if (this.verdicts.size >= MAX_VERDICTS) this.verdicts.delete(this.verdicts.keys().next().value!);
    this.verdicts.set(key, verdict);
    return verdict;
  }
}

/**
 * Where the longest suffix of `candidate` that starts with one of its digit groups (not the first: the whole was
 * tried) and is a phone number begins; 0 when none is. The same bounds as leadingPhone.
 */
function trailingPhone(candidate: string, groups: ReadonlyArray<[number, number]>, nationalDigits: ReadonlySet<number>, isPhone: (candidate: string) => boolean): number {
  const total = groups.reduce((sum, [start, end]) => sum + end - start, 0);
  let before = groups[0][1] - groups[0][0];
  for (let first = 1; first < groups.length; first++) {
    const digits = total - before;
    before += groups[first][1] - groups[first][0];
    if (digits > 15) continue;
    if (digits < 7) break;
    if (!nationalDigits.has(digits)) continue;
    // An `(` just before the group belongs to the number (its area code).
    let start = groups[first][0];
    const lead = candidate.charCodeAt(start - 1);
    if (lead === 0x28) start--;
    const suffix = candidate.slice(start);
    if (phoneShaped(suffix) && isPhone(suffix)) return start;
  }
  return 0;
}

/** Whether more digits of the same run follow `end` (one or two separators, then a digit): the candidate was cut short. */
function cutShort(text: string, end: number): boolean {
  for (let i = end; i < text.length && i < end + 3; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x30 && code <= 0x39) return i > end;
    if (code !== 0x20 && code !== 0x2e && code !== 0x28 && code !== 0x29 && code !== 0x2f && code !== 0x2d) return false;
  }
  return false;
}

/** Verdicts kept per detector (a detector belongs to one compiled policy version). */
const MAX_VERDICTS = 4_096;

/** The [start, end) of each run of digits in a candidate. */
function digitGroups(candidate: string): Array<[number, number]> {
  const groups: Array<[number, number]> = [];
  let start = -1;
  for (let i = 0; i <= candidate.length; i++) {
    const code = i < candidate.length ? candidate.charCodeAt(i) : -1;
    const digit = code >= 0x30 && code <= 0x39;
    if (digit && start < 0) start = i;
    else if (!digit && start >= 0) { groups.push([start, i]); start = -1; }
  }
  return groups;
}

/**
 * The length of the longest prefix of `candidate`, ending with one of its digit groups (but not the last: the whole
 * was tried), that is a phone number; 0 when none is. Only prefixes of at least 7 and at most 15 digits, the sizes
 * a phone number has (a national one: a length of the default region's numbers), are tried, so a candidate costs a
 * handful of shape checks and rarely a parse.
 */
function leadingPhone(candidate: string, groups: ReadonlyArray<[number, number]>, nationalDigits: ReadonlySet<number>, isPhone: (candidate: string) => boolean): number {
  // A leading `(` belongs to the area code: the prefix starts where the candidate does.
  const international = candidate.charCodeAt(0) === 0x2b;
  const digitsUpTo: number[] = [];
  let digits = 0;
  for (const [start, end] of groups) digitsUpTo.push((digits += end - start));
  for (let last = groups.length - 2; last >= 0; last--) {
    if (digitsUpTo[last] > 15) continue;
    if (digitsUpTo[last] < 7) break;
    // A national prefix of a length the region's numbers never have is not parsed (card numbers and other digit
    // groups would otherwise cost a parse each): libphonenumber would find it invalid anyway.
    if (!international && !nationalDigits.has(digitsUpTo[last])) continue;
    const prefix = candidate.slice(0, groups[last][1]);
    if (phoneShaped(prefix) && isPhone(prefix)) return prefix.length;
  }
  return 0;
}

/** libphonenumber parses one scan may make (each costs 10–40 µs). */
const MAX_VALIDATIONS_PER_SCAN = 5_000;

/** 2026-12-18, 18.12.2026, 12/18/2026: dates, which libphonenumber may take for national numbers. */
const AREA = /^\(\d{2,4}\)\s?/;
const DATE = /^(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4})$/;

/**
 * Whether a candidate is grouped the way phone numbers are written, before libphonenumber (slow) is asked: with a
 * leading `+`, 8–15 digits and at most one one-digit group after the country code; otherwise at most 12 digits in at
 * most 5 groups, one separator used throughout (after an optional `(area)`), and no group of a
 * single digit. Dates and lists of numbers (`2026-12-18`, `2026-12-8 242`, `17.53 2026-9-24`) fail this and cost nothing.
 */
export function phoneShaped(candidate: string): boolean {
  // A loop, not split/match: in number-dense text this runs for every candidate.
  if (candidate.charCodeAt(0) === 0x2b) {
    // E.164: at most 15 digits; one short group besides the country code (`+33 6 12 34 56 78`), no more.
    let digits = 0;
    let groups = 0;
    let shortGroups = 0;
    let run = 0;
    for (let i = 1; i <= candidate.length; i++) {
      const code = i < candidate.length ? candidate.charCodeAt(i) : -1;
      if (code >= 0x30 && code <= 0x39) { run++; continue; }
      if (run === 0) continue;
      digits += run;
      if (run === 1 && groups > 0) shortGroups++;
      groups++;
      run = 0;
    }
    return digits >= 8 && digits <= 15 && groups <= 7 && shortGroups <= 1;
  }
  if (DATE.test(candidate)) return false;
  let at = 0;
  let digits = 0;
  let groups = 0;
  if (candidate.charCodeAt(0) === 0x28) {
    const area = AREA.exec(candidate);
    if (!area) return false;
    digits = area[0].replace(/\D/g, '').length;
    groups = 1;
    at = area[0].length;
  }
  // One separator kind throughout, single characters between groups of two or more digits.
  let separator = 0;
  let run = 0;
  for (let i = at; i <= candidate.length; i++) {
    const code = i < candidate.length ? candidate.charCodeAt(i) : -1;
    if (code >= 0x30 && code <= 0x39) { run++; continue; }
    if (run < 2) return false;
    digits += run;
    groups++;
    run = 0;
    if (code === -1) break;
    if (code !== 0x20 && code !== 0x2e && code !== 0x2d) return false;
    if (separator === 0) separator = code;
    else if (separator !== code) return false;
  }
  return digits <= 12 && groups <= 5;
}
