/**
 * The text being scanned, with the cheap prefilters detectors share, computed once per scan and only when a
 * detector asks: the numeric windows (where every number-shaped detector looks) and the colon windows (IPv6).
 *
 * Why windows: ordinary prose has few digits, so patterns that start with letters but need digits (IBAN, NINO,
 * DNI/NIE) run on a small fraction of the text instead of all of it. (Patterns that start with a digit run on the
 * whole text: the regex engine skips prose by itself, faster than cutting it into windows.) A window is every digit run (runs closer than NUMERIC_JOIN
 * characters joined) widened by WINDOW_MARGIN characters on each side; no number-shaped finding has more than
 * WINDOW_MARGIN non-digit characters before its first or after its last digit, nor between two of its digits (the
 * longest such gap, an IBAN's letter groups `2345 MTLC AST0`, is 9), so none is cut by a window edge,
 * and a pattern's lookbehind or `\b` at a window edge sees the same neighbour it would see in the whole text.
 */
export const WINDOW_MARGIN = 16;
const NUMERIC_JOIN = WINDOW_MARGIN;
const COLON_MARGIN = 46;
/**
 * What ends the text before a `:` or `=` that may introduce a credential: a credential's name (those of
 * src/kernel CREDENTIAL_PATTERNS.assignments), maybe quoted, maybe followed by spaces. Other separators (prose
 * colons, clock times, `x = 1`) open no window.
 */
const CREDENTIAL_NAME = /(?<=(?:key|secret|token|passw(?:or)?d|pwd|signature|credentials?|authorization|cookie|signedheaders))/iy;

/** Whether the word before `at` (past up to 8 spaces and a quote) ends with a credential's name. */
function credentialNameBefore(text: string, at: number): boolean {
  let end = skipSpaces(text, at, -1);
  const quote = text.charCodeAt(end - 1);
  if (quote === 0x22 || quote === 0x27) end--;
  let start = end;
  while (start > 0 && end - start < 64 && isNameChar(text.charCodeAt(start - 1))) start--;
  if (end - start < 3) return false;
  // Sticky, a lookbehind at the name's end: read backwards from there only, not searched through a copy of the word.
  CREDENTIAL_NAME.lastIndex = end;
  return CREDENTIAL_NAME.test(text);
}

function isNameChar(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39) || code === 0x5f || code === 0x2d;
}

/** The longest run of non-space characters an assignment window follows (a name, a scheme, a value). */
const MAX_RUN = 4_096; // an IPv6 address with a zone or embedded IPv4 is at most 45 characters

export type Window = readonly [start: number, end: number];

export class ScanText {
  private numeric: Window[] | null = null;
  /** The digit runs the numeric windows were built from, as flat start/end pairs. */
  private digits: number[] = [];
  private colon: Window[] | null = null;
  private assignment: Window[] | null = null;

  constructor(readonly text: string) {}

  /** Spans of the text around its digits (merged, in order). */
  numericWindows(): readonly Window[] {
    if (this.numeric) return this.numeric;
    const windows: Array<[number, number]> = [];
    // Each digit run widened by WINDOW_MARGIN, merged with the window before it when they come within NUMERIC_JOIN
    // characters (runs up to 3 × 16 characters apart share a window). The runs are found by the regex engine, whose
    // scan for the next digit is several times faster than a charCodeAt loop over prose.
    const text = this.text;
    const length = text.length;
    const runs = DIGIT_RUNS;
    const digits: number[] = [];
    runs.lastIndex = 0;
    for (let run = runs.exec(text); run !== null; run = runs.exec(text)) {
      digits.push(run.index, runs.lastIndex);
      const start = Math.max(0, run.index - WINDOW_MARGIN);
      const end = Math.min(length, runs.lastIndex + WINDOW_MARGIN);
      const previous = windows[windows.length - 1];
      if (previous && start <= previous[1] + NUMERIC_JOIN) previous[1] = end;
      else windows.push([start, end]);
    }
    this.numeric = windows;
    this.digits = digits;
    return windows;
  }

  /** Every run of ASCII digits (pieces of at most 256, adjacent for a longer run), as flat start/end pairs in order. */
  digitRuns(): readonly number[] {
    this.numericWindows();
    return this.digits;
  }

  /**
   * Spans of the text around its pairs of close colons (merged, in order): where an IPv6 address can be. An address
   * has two colons at most five characters apart (a group of up to four hex digits between them, or `::`); prose
   * colons (`Note: …`, `12:30`) come alone, and the address pattern's search of the text around each one was the
   * IP detector's largest cost.
   */
  colonWindows(): readonly Window[] {
    if (this.colon) return this.colon;
    const windows: Array<[number, number]> = [];
    const text = this.text;
    let at = text.indexOf(':');
    while (at !== -1) {
      const next = text.indexOf(':', at + 1);
      if (next !== -1 && next - at <= 5) {
        const start = Math.max(0, at - COLON_MARGIN);
        const end = Math.min(text.length, next + COLON_MARGIN);
        const last = windows[windows.length - 1];
        if (last && start <= last[1]) last[1] = Math.max(last[1], end);
        else windows.push([start, end]);
      }
      at = next;
    }
    this.colon = windows;
    return windows;
  }

  /**
   * Spans around each `:` and `=` that follows a credential's name (merged, in order): the word before it (the
   * name, after a few spaces), and the two words after it (an `Authorization` scheme and the value).
   */
  assignmentWindows(): readonly Window[] {
    if (this.assignment) return this.assignment;
    const windows: Array<[number, number]> = [];
    const text = this.text;
    const separators = /[:=]/g;
    for (let match = separators.exec(text); match !== null; match = separators.exec(text)) {
      const at = match.index;
      if (!credentialNameBefore(text, at)) continue;
      const start = skipRun(text, skipSpaces(text, at, -1), -1);
      const end = skipRun(text, skipSpaces(text, skipRun(text, skipSpaces(text, at + 1, 1), 1), 1), 1);
      const last = windows[windows.length - 1];
      if (last && start <= last[1]) last[1] = Math.max(last[1], end);
      else windows.push([start, end]);
    }
    this.assignment = windows;
    return windows;
  }
}

/** From `at` in direction `step`, past up to 8 spaces: the first index that is not one (for step -1, the index after it). */
function skipSpaces(text: string, at: number, step: 1 | -1): number {
  let i = at;
  for (let k = 0; k < 8; k++) {
    const next = step === 1 ? i : i - 1;
    if (next < 0 || next >= text.length || !isSpace(text.charCodeAt(next))) break;
    i += step;
  }
  return i;
}

/** From `at` in direction `step`, past one run of non-space characters (bounded). */
function skipRun(text: string, at: number, step: 1 | -1): number {
  let i = at;
  for (let k = 0; k < MAX_RUN; k++) {
    const next = step === 1 ? i : i - 1;
    if (next < 0 || next >= text.length || isSpace(text.charCodeAt(next))) break;
    i += step;
  }
  return i;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d;
}

/**
 * Runs of ASCII digits, at most 256 at a time (shared: scans run one at a time, and each resets lastIndex first).
 * Bounded: an unbounded `[0-9]+` over a run of millions of digits overflows irregexp's backtracking stack ("Maximum
 * call stack size exceeded"); the pieces of a longer run are adjacent, so their windows merge into one.
 */
const DIGIT_RUNS = /[0-9]{1,256}/g;
