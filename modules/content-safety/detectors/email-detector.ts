import type { Detector, EmitFinding } from './detector.js';
import type { ScanText } from './scan-text.js';

const MAX_LOCAL_PART = 64;
const MAX_DOMAIN = 253;

/**
 * Email addresses, found from each `@` outwards rather than by a regex tried at every position: prose has few
 * `@`, so the cost is one indexOf pass. Local part: letters, digits and `._%+-` (at most 64); domain: labels of
 * letters, digits and `-`, at least two, the last one alphabetic of two or more letters.
 */
export class EmailDetector implements Detector {
  readonly type = 'email' as const;
  readonly version = 'email/1';

  detect({ text }: ScanText, emit: EmitFinding): void {
    let resumeAt = 0;
    for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
      if (at < resumeAt) continue;
      let start = at;
      while (start > 0 && at - start < MAX_LOCAL_PART && isLocalChar(text.charCodeAt(start - 1))) start--;
      while (start < at && text.charCodeAt(start) === 0x2e) start++; // a local part does not start with a dot
      if (start === at) continue;
      let end = at + 1;
      while (end < text.length && end - at <= MAX_DOMAIN && isDomainChar(text.charCodeAt(end))) end++;
      while (end > at + 1 && (text.charCodeAt(end - 1) === 0x2e || text.charCodeAt(end - 1) === 0x2d)) end--;
      const domainEnd = validDomainEnd(text, at + 1, end);
      if (domainEnd === -1) continue;
      emit(start, domainEnd);
      resumeAt = domainEnd;
    }
  }
}

function isLocalChar(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39)
    || code === 0x2e || code === 0x5f || code === 0x25 || code === 0x2b || code === 0x2d;
}

function isDomainChar(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39) || code === 0x2e || code === 0x2d;
}

/** Where a valid domain in text[from, to) ends (its top-level label alphabetic, two letters or more), or -1. */
function validDomainEnd(text: string, from: number, to: number): number {
  const domain = text.slice(from, to);
  const labels = domain.split('.');
  if (labels.length < 2 || labels.some((label) => label.length === 0 || label.length > 63)) return -1;
  const top = labels[labels.length - 1];
  if (top.length < 2 || !/^[A-Za-z]+$/.test(top)) return -1;
  return to;
}
