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
const HASH_BASE = 31;
/** HASH_BASE^FORM_PREFIX modulo 2^32: what the character leaving the rolling window weighs. */
const LEAVING_WEIGHT = Array.from({ length: FORM_PREFIX }).reduce<number>((weight) => Math.imul(weight, HASH_BASE), 1);
const FILTER_BITS = 16;

/**
 * The process's own credentials (up to 20,000 forms: every encoding of every key it holds) by a rolling hash of their
 * first FORM_PREFIX characters: one pass over the text computes the hash of the FORM_PREFIX characters ending at each
 * position, a bit filter rejects almost every position, and only a hash hit is compared with the forms. Linear in the
 * text whatever the number of forms, and where a form is, not only inside runs of certain characters (a JSON-escaped
 * form holds a `"`).
 */
interface FormIndex { filter: Uint8Array; byHash: Map<number, string[]> }

let indexedForms: readonly string[] | null = null;
let index: FormIndex = { filter: new Uint8Array(1 << FILTER_BITS), byHash: new Map() };

function formIndex(forms: readonly string[]): FormIndex {
  if (forms === indexedForms) return index;
  const next: FormIndex = { filter: new Uint8Array(1 << FILTER_BITS), byHash: new Map() };
  for (const form of forms) { // longest first, as knownSecretForms orders them: the longest form at a position wins
    if (form.length < FORM_PREFIX) continue;
    let hash = 0;
    for (let i = 0; i < FORM_PREFIX; i++) hash = (Math.imul(hash, HASH_BASE) + form.charCodeAt(i)) | 0;
    next.filter[hash & ((1 << FILTER_BITS) - 1)] = 1;
    next.byHash.set(hash, [...(next.byHash.get(hash) ?? []), form]);
  }
  indexedForms = forms;
  index = next;
  return index;
}

function findKnownForms(text: string, { filter, byHash }: FormIndex, emit: EmitFinding): void {
  // The constants as locals: a module-scope constant read in the loop costs a context load and a hole check per character.
  const mask = (1 << FILTER_BITS) - 1;
  const base = HASH_BASE;
  const prefix = FORM_PREFIX;
  const leaving = LEAVING_WEIGHT;
  const length = text.length;
  let hash = 0;
  let covered = 0; // a form found ends here: no other starts inside it
  for (let end = 0; end < length; end++) {
    hash = (Math.imul(hash, base) + text.charCodeAt(end)) | 0;
    if (end >= prefix) hash = (hash - Math.imul(text.charCodeAt(end - prefix), leaving)) | 0;
    if (filter[hash & mask] === 0 || end < prefix - 1) continue;
    const start = end - prefix + 1;
    if (start < covered) continue;
    const form = formAt(text, start, byHash.get(hash)); // not a closure: one capturing `text` would slow every read of it
    if (!form) continue;
    emit(start, start + form.length);
    covered = start + form.length;
  }
}

/** The first (longest) of the candidates that starts at `start`. */
function formAt(text: string, start: number, candidates: readonly string[] | undefined): string | undefined {
  if (!candidates) return undefined;
  for (const candidate of candidates) if (text.startsWith(candidate, start)) return candidate;
  return undefined;
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
