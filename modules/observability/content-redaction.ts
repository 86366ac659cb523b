import { redactText } from '../../src/kernel/index.js';
import { type FindingType, compilePolicy, scan } from '../content-safety/index.js';

/** Most characters of one prompt or completion a content log line keeps. */
export const MAX_LOGGED_CONTENT = 4_000;

/**
 * Personal data in logged content: emails, card numbers (Luhn) and national ids (US SSN, UK NINO, Spanish DNI/NIE,
 * with their validity checks) by the content-safety detectors — one set of rules for policies and logs — then phone
 * numbers by the broader patterns below: a log may over-redact, and libphonenumber's validity would let through
 * numbers a reader would still call personal (`555-123-4567`). Documented in docs/operations.md ("Request log").
 */
const DETECTED = compilePolicy({
  input: { email: 'mask', card: 'mask', national_id: 'mask' }, output: {},
  tokenScope: 'request', unresolvedTokenPolicy: 'leave-masked', placeholderInstruction: false,
}).input;

const MARKERS: Partial<Record<FindingType, string>> = { email: '[email]', card: '[card]', national_id: '[national-id]' };

const PHONE_RULES: RegExp[] = [
  // International (+ and 8–15 digits) and North American (555-123-4567, (555) 123 4567).
  /\+\d(?:[\s.()-]{0,2}\d){7,14}(?!\d)/g,
  /(?<![\d-])\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}(?![\d-])/g,
];

/**
 * Content as a content log may show it: personal data (emails, phone numbers, card numbers, national
 * ids) replaced by its kind, then every key, credential, URL and host the gateway's own redaction
 * knows, capped.
 */
export function redactContent(text: string): string {
  let out = '';
  let at = 0;
  for (const finding of scan(text, DETECTED)) {
    out += text.slice(at, finding.start) + MARKERS[finding.type];
    at = finding.end;
  }
  out += text.slice(at);
  for (const pattern of PHONE_RULES) out = out.replace(pattern, '[phone]');
  return redactText(out, MAX_LOGGED_CONTENT);
}
