import { MAX_LOGGED_CONTENT, redactContent } from '../../modules/observability/content-redaction.js';

describe('redactContent (opt-in content logs)', () => {
  test.each([
    ['write to jane.doe+work@mail.example.co.uk today', 'write to [email] today'],
    ['card 4111 1111 1111 1111 ok', 'card [card] ok'],
    ['card 5500-0000-0000-0004 ok', 'card [card] ok'],
    ['card 378282246310005 ok', 'card [card] ok'],
    ['SSN 078-05-1120.', 'SSN [national-id].'],
    ['NINO AB 12 34 56 C here', 'NINO [national-id] here'],
    ['DNI 12345678Z here', 'DNI [national-id] here'],
    ['call +44 20 7946 0958 now', 'call [phone] now'],
    ['call +1 (555) 123-4567 now', 'call [phone] now'],
    ['call 555-123-4567 now', 'call [phone] now'],
    ['key sk-proj-abcdefghijklmnop1234 and AKIAIOSFODNN7EXAMPLE', 'key [redacted] and [redacted]'],
    ['Authorization: Bearer abc.def.ghi', 'Authorization: [redacted]'],
  ])('%s', (input, expected) => {
    expect(redactContent(input)).toBe(expected);
  });

  test.each([
    // Not card numbers: the Luhn check fails.
    ['order 1234 5678 9012 3456 shipped'],
    // Dates, times, versions, prices and small counts are not personal data.
    ['on 2026-12-01 at 13:35, version 1.2.3, price 19.99, 42 tokens'],
    ['the year 1999 and 300 apples'],
  ])('leaves %s alone', (input) => {
    expect(redactContent(input)).toBe(input);
  });

  test('is capped', () => {
    expect(redactContent('a'.repeat(MAX_LOGGED_CONTENT * 2)).length).toBeLessThanOrEqual(MAX_LOGGED_CONTENT);
  });
});
