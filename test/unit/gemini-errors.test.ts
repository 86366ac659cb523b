import { geminiHttpError, geminiStreamError } from '../../modules/providers/gemini/gemini-errors.js';
import { fixtureBytes } from '../support/provider-fixtures.js';

const body = (name: string) => fixtureBytes('gemini', name).toString('utf8');

describe('Gemini error classification', () => {
  test.each([
    ['error-400-invalid.json', 400, 'invalid_request', false],
    ['error-400-context.json', 400, 'context_length', false],
    // Google answers an invalid key with 400 INVALID_ARGUMENT; it is a credential problem all the same.
    ['error-400-api-key.json', 400, 'auth', false],
    ['error-403.json', 403, 'auth', false],
    ['error-429.json', 429, 'rate_limited', true],
    ['error-500.json', 500, 'transient', true],
    ['error-503.json', 503, 'overloaded', true],
    ['error-504.json', 504, 'timeout', true],
  ])('%s (HTTP %i) → %s', (file, status, errorClass, fallbackable) => {
    const error = geminiHttpError(status, {}, body(file));
    expect(error).toMatchObject({ errorClass, httpStatus: status, fallbackable });
    expect(error.message).toMatch(new RegExp(`^provider returned ${status}`));
  });

  test('RESOURCE_EXHAUSTED carries google.rpc.RetryInfo; a retry-after header wins when present', () => {
    expect(geminiHttpError(429, {}, body('error-429.json')).retryAfterMs).toBe(37_000);
    expect(geminiHttpError(429, { 'retry-after': '5' }, body('error-429.json')).retryAfterMs).toBe(5_000);
    expect(geminiHttpError(503, {}, body('error-503.json')).retryAfterMs).toBeNull();
  });

  test('messages are sanitised: URLs masked, bounded; a non-JSON page is never passed on', () => {
    expect(geminiHttpError(500, {}, body('error-500.json'))).toMatchObject({
      message: 'provider returned 500',
      providerMessage: 'An internal error has occurred. Please retry or report in [url]',
    });
    const html = geminiHttpError(502, {}, '<html><body>Bad gateway at https://internal.example/secret</body></html>');
    expect(html).toMatchObject({ errorClass: 'transient', message: 'provider returned 502' });
    expect(geminiHttpError(400, {}, JSON.stringify({ error: { code: 400, message: 'x'.repeat(5000), status: 'INVALID_ARGUMENT' } })).providerMessage!.length).toBeLessThan(400);
  });

  test('a status name decides over a generic HTTP status (front ends sometimes use 500 for everything)', () => {
    expect(geminiHttpError(500, {}, JSON.stringify({ error: { code: 503, message: 'busy', status: 'UNAVAILABLE' } })).errorClass).toBe('overloaded');
    expect(geminiHttpError(500, {}, JSON.stringify([{ error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' } }])).errorClass).toBe('rate_limited');
  });

  test('an error inside a stream is classified by its code and status, and carries no HTTP status', () => {
    expect(geminiStreamError({ code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' })).toMatchObject({ errorClass: 'overloaded', httpStatus: null });
    expect(geminiStreamError({ code: 429, status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1.5s' }] })).toMatchObject({
      errorClass: 'rate_limited',
      retryAfterMs: 1500,
    });
    expect(geminiStreamError({ message: 'boom' })).toMatchObject({ errorClass: 'transient', message: 'the provider reported an error inside the stream', providerMessage: 'boom' });
  });
});
