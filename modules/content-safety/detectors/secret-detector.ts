import { CREDENTIAL_PATTERNS, knownSecretForms } from '../../../src/kernel/index.js';
import { type Detector, type EmitFinding, eachMatch } from './detector.js';
import type { ScanText } from './scan-text.js';

/** What may stand between a credential's name and its value once the captured name and separator are skipped. */
const VALUE_LEAD = /^[\s=]*(?:(?:Bearer|Basic|Token|Digest|Negotiate|AWS4-HMAC-SHA256)\s+)?/i;

const VERSION_OR_DATE = /^v?[\d.:/-]+$/;
const TRAILING_PUNCTUATION = '.,:;!?)]';

/**
 * Whether the value after a credential's name looks like one: `token: chapter`, `Token gateway.`, `secret: 314` are
 * prose, and so are versions and dates. At least 6 characters with a digit or a symbol, or 16 letters of mixed case.
 */
export function credentialLike(value: string): boolean {
  if (value.length < 6 || VERSION_OR_DATE.test(value)) return false;
  return /[^A-Za-z]/.test(value) || (value.length >= 16 && /[a-z]/.test(value) && /[A-Z]/.test(value));
}

/**
 * Secrets, in the formats the gateway's own redaction knows (src/kernel CREDENTIAL_PATTERNS): private-key blocks,
 * JWTs, provider and platform token formats (OpenAI/Anthropic `sk-`, Google `AIza`, GitHub, GitLab, Slack, AWS,
 * Hugging Face, npm, Switchyard's admin tokens), credentials after their name (`Authorization: Bearer …`,
 * `password=…`; the name stays, the value is the finding), the user:password part of connection strings, and every
 * credential this process itself holds in any of its encodings. Random-looking runs without a known format (hashes,
 * ids) are not findings: too many false positives in code.
 */
export class SecretDetector implements Detector {
  readonly type = 'secret' as const;
  readonly version = 'secret/1';
  private readonly blocks = copy(CREDENTIAL_PATTERNS.privateKeyBlock);
  // The case-sensitive token formats as one alternation behind one `\b`: one pass instead of a dozen (each has a
  // literal start). The `\b` keeps a run such as `eyJeyJeyJ…` from being tried at every position inside it, each
  // attempt running to the end of the run (quadratic on hostile input).
  // A case-insensitive format cannot join it without spelling its letters as classes (`[Kk][Ee][Yy]`), which made the
  // whole alternation 60% slower; the one there is (`key-…`, `token_…`, `secret-…`) is searched separator first.
  private readonly tokens = [
    new RegExp(`\\b(?:${CREDENTIAL_PATTERNS.tokens.filter((pattern) => !pattern.flags.includes('i')).map((pattern) => `(?:${withoutLeadingBoundary(pattern.source)})`).join('|')})`, 'g'),
    ...CREDENTIAL_PATTERNS.tokens.filter((pattern) => pattern.flags.includes('i')).map(separatorFirst),
  ];
  private readonly assignments = CREDENTIAL_PATTERNS.assignments.map(copy);
  private readonly addressCredentials = copy(CREDENTIAL_PATTERNS.credentialsInAddress);

  detect(scanText: ScanText, emit: EmitFinding): void {
    const text = scanText.text;
    const whole = (match: RegExpExecArray, offset: number) => emit(offset + match.index, offset + match.index + match[0].length);
    if (text.includes('-----BEGIN ')) eachMatch(this.blocks, text, whole);
    for (const pattern of this.tokens) {
      // A separator-first pattern's match starts at its separator: the name before it (group `name`) is part of the token.
      eachMatch(pattern, text, (match, offset) => emit(offset + match.index - (match.groups?.name?.length ?? 0), offset + match.index + match[0].length));
    }
    // A credential after its name has a `:` or `=` close by (`Authorization: Bearer …`, `password=…`): only the text
    // around them is searched.
    const assignmentWindows = scanText.assignmentWindows();
    for (const pattern of this.assignments) {
      eachMatch(pattern, text, (match, offset) => {
        let valueAt = (match[1]?.length ?? 0) + (match[2]?.length ?? 0);
        valueAt += VALUE_LEAD.exec(match[0].slice(valueAt))![0].length;
        let valueEnd = match[0].length;
        while (valueEnd > valueAt && TRAILING_PUNCTUATION.includes(match[0][valueEnd - 1])) valueEnd--;
        if (credentialLike(match[0].slice(valueAt, valueEnd))) emit(offset + match.index + valueAt, offset + match.index + valueEnd);
      }, assignmentWindows);
    }
    // user:password@host needs an `@`: only the text around each one is searched.
    if (text.includes('@')) eachMatch(this.addressCredentials, text, whole, atWindows(text));
    const forms = knownSecretForms();
    if (forms.length > 0) findKnownForms(text, formIndex(forms), emit);
  }
}

/** Forms of credentials this process holds are at least this long (src/kernel known-secrets). */
const FORM_PREFIX = 8;
/** Forms this long or longer are looked for at every STRIDE-th position only (see findLongForms). */
const STRIDE = 8;
const LONG_FORM = FORM_PREFIX + STRIDE - 1;
const HASH_BASE = 31;
/** HASH_BASE^FORM_PREFIX modulo 2^32: what the character leaving the rolling window weighs. */
const LEAVING_WEIGHT = Array.from({ length: FORM_PREFIX }).reduce<number>((weight) => Math.imul(weight, HASH_BASE), 1);
const FILTER_BITS = 16;

/**
 * The process's own credentials (up to 20,000 forms: every encoding of every key it holds), found by hashes of
 * FORM_PREFIX characters checked against a bit filter, and compared with the forms only on a hit: linear in the text
 * whatever the number of forms, and wherever a form is (not only inside runs of certain characters: a JSON-escaped
 * form holds a `"`). A form of LONG_FORM characters or more (every provider key, and its encodings) holds, at one of
 * its first STRIDE offsets, FORM_PREFIX characters that start at a multiple of STRIDE in any text it sits in; so each
 * of its first STRIDE offsets is indexed and the text is hashed at every STRIDE-th position only — one character read
 * per character of text. Shorter forms (a short password) need a rolling hash at every position: two reads each.
 */
interface Candidate { form: string; offset: number }
interface HashIndex { filter: Uint8Array; byHash: Map<number, Candidate[]>; size: number }
interface FormIndex { long: HashIndex; short: HashIndex }

const emptyIndex = (): HashIndex => ({ filter: new Uint8Array(1 << FILTER_BITS), byHash: new Map(), size: 0 });
let indexedForms: readonly string[] | null = null;
let index: FormIndex = { long: emptyIndex(), short: emptyIndex() };

function formIndex(forms: readonly string[]): FormIndex {
  if (forms === indexedForms) return index;
  const next: FormIndex = { long: emptyIndex(), short: emptyIndex() };
  for (const form of forms) { // longest first, as knownSecretForms orders them: the longest form at a position wins
    if (form.length < FORM_PREFIX) continue;
    const long = form.length >= LONG_FORM;
    for (let offset = 0; offset < (long ? STRIDE : 1); offset++) addCandidate(long ? next.long : next.short, form, offset);
  }
  // At a position, the candidates are tried in the order of their start in the text (the largest offset first), then
  // longest first: with the positions in order too, every find starts at or after the one before it (see addFinds).
  for (const candidates of [...next.long.byHash.values(), ...next.short.byHash.values()]) {
    candidates.sort((a, b) => b.offset - a.offset || b.form.length - a.form.length);
  }
  indexedForms = forms;
  index = next;
  return index;
}

function addCandidate(target: HashIndex, form: string, offset: number): void {
  const hash = hashAt(form, offset);
  target.filter[hash & ((1 << FILTER_BITS) - 1)] = 1;
  const candidates = target.byHash.get(hash);
  if (candidates) candidates.push({ form, offset });
  else target.byHash.set(hash, [{ form, offset }]);
  target.size++;
}

function hashAt(text: string, at: number): number {
  let hash = 0;
  for (let i = at; i < at + FORM_PREFIX; i++) hash = (Math.imul(hash, HASH_BASE) + text.charCodeAt(i)) | 0;
  return hash;
}

/**
 * Every place a held form is, as findings. Forms found overlapping (one credential's end is another's start, or a
 * short form reaching past a long one) become one finding over both: masking either alone would leave part of the other.
 */
function findKnownForms(text: string, forms: FormIndex, emit: EmitFinding): void {
  const spans: number[] = []; // flat start/end pairs
  if (forms.long.size > 0) findLongForms(text, forms.long, spans);
  if (forms.short.size > 0) findShortForms(text, forms.short, spans);
  if (spans.length === 0) return;
  const order = Array.from({ length: spans.length / 2 }, (_, i) => i).sort((x, y) => spans[2 * x] - spans[2 * y]);
  let start = spans[2 * order[0]];
  let end = spans[2 * order[0] + 1];
  for (const i of order) {
    if (spans[2 * i] < end) {
      end = Math.max(end, spans[2 * i + 1]);
      continue;
    }
    emit(start, end);
    start = spans[2 * i];
    end = spans[2 * i + 1];
  }
  emit(start, end);
}

/** What a pass over the text has found so far, as flat start/end pairs, and where the finds end. */
interface Finds { spans: number[]; covered: number }
function findLongForms(text: string, { filter, byHash }: HashIndex, spans: number[]): void {
  // The constants as locals: a module-scope constant read in the loop costs a context load and a hole check each time.
  const mask = (1 << FILTER_BITS) - 1;
  const base = HASH_BASE;
  const stride = STRIDE;
  const last = text.length - FORM_PREFIX;
  const finds: Finds = { spans, covered: 0 };
  for (let at = 0; at <= last; at += stride) {
    const hash = (Math.imul(Math.imul(Math.imul(Math.imul(Math.imul(Math.imul(Math.imul(text.charCodeAt(at), base) + text.charCodeAt(at + 1), base)
      + text.charCodeAt(at + 2), base) + text.charCodeAt(at + 3), base) + text.charCodeAt(at + 4), base) + text.charCodeAt(at + 5), base)
      + text.charCodeAt(at + 6), base) + text.charCodeAt(at + 7)) | 0;
    if (filter[hash & mask] === 0) continue;
    const candidates = byHash.get(hash);
    if (candidates) addFinds(text, at, finds, candidates); // not a closure: one capturing `text` would slow every read of it
  }
}

function findShortForms(text: string, { filter, byHash }: HashIndex, spans: number[]): void {
  const mask = (1 << FILTER_BITS) - 1;
  const base = HASH_BASE;
  const prefix = FORM_PREFIX;
  const leaving = LEAVING_WEIGHT;
  const length = text.length;
  const finds: Finds = { spans, covered: 0 };
  let hash = 0;
  for (let end = 0; end < length; end++) {
    hash = (Math.imul(hash, base) + text.charCodeAt(end)) | 0;
    if (end >= prefix) hash = (hash - Math.imul(text.charCodeAt(end - prefix), leaving)) | 0;
    if (filter[hash & mask] === 0 || end < prefix - 1) continue;
    const candidates = byHash.get(hash);
    if (candidates) addFinds(text, end - prefix + 1, finds, candidates);
  }
}

/**
 * Records each candidate that is in the text with its hashed characters at `at` and reaches past what was found
 * already. Finds come in the order of their start (positions in order, and candidates at a position by their start:
 * formIndex sorts them; a candidate at one position starts after every candidate at the one before), so a form that
 * ends within the last find's end lies inside what was found and adds nothing. Only forms that repeat themselves
 * (`abab…`) overlap their own occurrences; each is verified once per position, so a text costs at most its length
 * times the form's.
 */
function addFinds(text: string, at: number, finds: Finds, candidates: readonly Candidate[]): void {
  for (const candidate of candidates) {
    const start = at - candidate.offset;
    const end = start + candidate.form.length;
    // A negative start would be read from 0 by startsWith.
    if (start < 0 || end <= finds.covered || !text.startsWith(candidate.form, start)) continue;
    finds.spans.push(start, end);
    finds.covered = end;
  }
}

function withoutLeadingBoundary(source: string): string {
  if (!source.startsWith('\\b')) throw new Error(`A token format must start at a word boundary: ${source}`);
  return source.slice(2);
}

/**
 * `\b(?:key|token|secret)[-_]rest` as `[-_](?<=\b(?<name>key|token|secret)[-_])rest`: the same matches (the name
 * is group `name`), but the engine skips ahead to each `-` and `_` (rare in prose) instead of trying every word start
 * against the names — 0.6 against 2.3 ms per MB of prose. A format of another shape is searched as it is.
 */
export function separatorFirst(pattern: RegExp): RegExp {
  const shape = /^\\b\(\?:([a-z|]+)\)(\[[^\]]+\])(.*)$/.exec(pattern.source);
  if (!shape) return new RegExp(pattern.source, pattern.flags);
  const [, names, separator, rest] = shape;
  return new RegExp(`${separator}(?<=\\b(?<name>${names})${separator})${rest}`, pattern.flags);
}

function copy(pattern: RegExp): RegExp {
  return new RegExp(pattern.source, pattern.flags);
}

/** Spans around each `@` to the nearest whitespace on either side (bounded), merged. */
function atWindows(text: string): Array<[number, number]> {
  const windows: Array<[number, number]> = [];
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && at - start < 512 && !/\s/.test(text[start - 1])) start--;
    let end = at + 1;
    while (end < text.length && end - at < 512 && !/\s/.test(text[end])) end++;
    const last = windows[windows.length - 1];
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else windows.push([start, end]);
  }
  return windows;
}
