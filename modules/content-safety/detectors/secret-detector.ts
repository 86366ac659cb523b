import { CREDENTIAL_PATTERNS, knownSecretForms } from '../../../src/kernel/index.js';
import { type Detector, type EmitFinding, eachMatch } from './detector.js';
import type { ScanText } from './scan-text.js';

/** What may stand between a credential's name and its value once the captured name and separator are skipped. */
const VALUE_LEAD = /^[\s=]*(?:(?:Bearer|Basic|Token|Digest|Negotiate|AWS4-HMAC-SHA256)\s+)?/i;

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
  private readonly tokens = CREDENTIAL_PATTERNS.tokens.map(copy);
  private readonly assignments = CREDENTIAL_PATTERNS.assignments.map(copy);
  private readonly addressCredentials = copy(CREDENTIAL_PATTERNS.credentialsInAddress);

  detect({ text }: ScanText, emit: EmitFinding): void {
    const whole = (match: RegExpExecArray, offset: number) => emit(offset + match.index, offset + match.index + match[0].length);
    if (text.includes('-----BEGIN ')) eachMatch(this.blocks, text, whole);
    for (const pattern of this.tokens) eachMatch(pattern, text, whole);
    for (const pattern of this.assignments) {
      eachMatch(pattern, text, (match, offset) => {
        let valueAt = (match[1]?.length ?? 0) + (match[2]?.length ?? 0);
        valueAt += VALUE_LEAD.exec(match[0].slice(valueAt))![0].length;
        if (valueAt < match[0].length) emit(offset + match.index + valueAt, offset + match.index + match[0].length);
      });
    }
    // user:password@host needs an `@`: only the text around each one is searched.
    if (text.includes('@')) eachMatch(this.addressCredentials, text, whole, atWindows(text));
    for (const form of knownSecretForms()) {
      for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + form.length)) emit(at, at + form.length);
    }
  }
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
