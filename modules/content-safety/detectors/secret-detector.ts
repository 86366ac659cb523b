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
  // The token formats as one alternation: one pass instead of a dozen (each has a literal start); a case-insensitive
  // one has its letters spelled as classes (`[Kk][Ee][Yy]`) so that it can join.
  // Each keeps its leading `\b`: without it, a run such as `eyJeyJeyJ…` would be tried from every position inside
  // it, each attempt running to the end of the run (quadratic on hostile input).
  private readonly tokens = [
    new RegExp(CREDENTIAL_PATTERNS.tokens.map((pattern) => `(?:${pattern.flags.includes('i') ? caseless(pattern.source) : pattern.source})`).join('|'), 'g'),
  ];
  private readonly assignments = CREDENTIAL_PATTERNS.assignments.map(copy);
  private readonly addressCredentials = copy(CREDENTIAL_PATTERNS.credentialsInAddress);

  private readonly runs = /[^\s"'<>()[\]{},;]{8,}/g;

  private findKnownForms(text: string, forms: readonly string[], emit: EmitFinding): void {
    const index = formIndex(forms);
    eachMatch(this.runs, text, (match, offset) => {
      const run = match[0];
      for (let i = 0; i + FORM_PREFIX <= run.length; i++) {
        const candidates = index.get(run.slice(i, i + FORM_PREFIX));
        const form = candidates?.find((candidate) => run.startsWith(candidate, i)); // longest first, as knownSecretForms orders them
        if (!form) continue;
        emit(offset + match.index + i, offset + match.index + i + form.length);
        i += form.length - 1;
      }
    });
  }

  detect(scanText: ScanText, emit: EmitFinding): void {
    const text = scanText.text;
    const whole = (match: RegExpExecArray, offset: number) => emit(offset + match.index, offset + match.index + match[0].length);
    if (text.includes('-----BEGIN ')) eachMatch(this.blocks, text, whole);
    for (const pattern of this.tokens) eachMatch(pattern, text, whole);
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
    if (forms.length > 0) this.findKnownForms(text, forms, emit);
  }
}

/** Forms of credentials this process holds are at least this long (src/kernel known-secrets). */
const FORM_PREFIX = 8;

/**
 * The process's own credentials (up to 20,000 forms: every encoding of every key it holds) are looked up by their
 * first FORM_PREFIX characters at each position of each long non-space run, not searched one by one.
 */
let indexedForms: readonly string[] | null = null;
let formsByPrefix = new Map<string, string[]>();

function formIndex(forms: readonly string[]): Map<string, string[]> {
  if (forms === indexedForms) return formsByPrefix;
  formsByPrefix = new Map();
  for (const form of forms) {
    if (form.length < FORM_PREFIX) continue;
    const prefix = form.slice(0, FORM_PREFIX);
    formsByPrefix.set(prefix, [...(formsByPrefix.get(prefix) ?? []), form]);
  }
  indexedForms = forms;
  return formsByPrefix;
}

/** A regex source matching what it matched under the `i` flag without it: each ASCII letter outside a class and not escaped becomes `[xX]`. */
export function caseless(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const char = source[i];
    if (char === '\\') { out += char + (source[i + 1] ?? ''); i++; continue; }
    if (char === '[') inClass = true;
    else if (char === ']') inClass = false;
    const lower = char.toLowerCase();
    const upper = char.toUpperCase();
    out += !inClass && lower !== upper && /[a-z]/i.test(char) ? `[${lower}${upper}]` : char;
  }
  return out;
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
