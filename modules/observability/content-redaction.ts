import { redactText } from '../../src/kernel/index.js';

/** Most characters of one prompt or completion a content log line keeps. */
export const MAX_LOGGED_CONTENT = 4_000;

type Rule = [RegExp, string | ((match: string) => string)];

/**
 * Personal data in logged content, found by patterns (no maintained detector package is installed;
 * these rules are documented in docs/operations.md ("Request log") and tested case by case). Order matters: card numbers
 * before phone numbers, which would otherwise take their digits.
 */
const PII_RULES: Rule[] = [
  // Email addresses.
  [/[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g, '[email]'],
  // Payment card numbers: 13–19 digits, optionally grouped by spaces or dashes, passing the Luhn check.
  [/(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g, (match) => (luhnValid(match.replace(/\D/g, '')) ? '[card]' : match)],
  // US social security numbers.
  [/(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)/g, '[national-id]'],
  // UK national insurance numbers.
  [/\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/g, '[national-id]'],
  // Spanish DNI and NIE.
  [/\b[XYZ]?\d{7,8}-?[A-HJ-NP-TV-Z]\b/g, '[national-id]'],
  // Phone numbers: international (+ and 8–15 digits) and North American (555-123-4567, (555) 123 4567).
  [/\+\d(?:[\s.()-]{0,2}\d){7,14}(?!\d)/g, '[phone]'],
  [/(?<![\d-])\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}(?![\d-])/g, '[phone]'],
];

/**
 * Content as a content log may show it: personal data (emails, phone numbers, card numbers, national
 * ids) replaced by its kind, then every key, credential, URL and host the gateway's own redaction
 * knows, capped.
 */
export function redactContent(text: string): string {
  let out = text;
  for (const [pattern, replacement] of PII_RULES) out = out.replace(pattern, replacement as string);
  return redactText(out, MAX_LOGGED_CONTENT);
}

function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}
