import { GatewayError } from '../../modules/canonical/index.js';
import { anthropicBetasOf } from '../../modules/inference/pipeline/request-headers.js';

function refusal(value: string | string[]): GatewayError {
  try {
    anthropicBetasOf({ 'anthropic-beta': value });
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error(`accepted ${JSON.stringify(value)}`);
}

describe('the anthropic-beta request header', () => {
  test.each([
    ['a header line break', 'files-api-2025-04-14\r\nx-api-key: stolen'],
    ['a bare newline', 'files-api-2025-04-14\nx-evil: 1'],
    ['a colon', 'x-api-key:stolen'],
    ['a space inside a name', 'files api'],
    ['a semicolon', 'a;b'],
    ['an empty name between commas', 'a,,b'],
    ['a non-ASCII name', 'bêta-2025'],
    ['a name over 64 characters', 'b'.repeat(65)],
    ['17 names', Array.from({ length: 17 }, (_, i) => `beta-${i}`).join(',')],
    ['a header over 1024 characters', Array.from({ length: 16 }, (_, i) => `${'b'.repeat(60)}-${i}`).join(', ')],
    ['a name starting with a dash', '-beta'],
  ])('%s is the caller\'s 400 naming the header', (_, value) => {
    const error = refusal(value);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_request', param: 'anthropic-beta' });
    expect(error.message).toContain("'anthropic-beta'");
    // The refusal never echoes what was sent.
    expect(error.message).not.toContain('stolen');
  });

  test('absent or blank asks for nothing', () => {
    expect(anthropicBetasOf({})).toBeNull();
    expect(anthropicBetasOf({ 'anthropic-beta': '' })).toBeNull();
    expect(anthropicBetasOf({ 'anthropic-beta': '  ' })).toBeNull();
  });

  test('names are kept in order, trimmed, once each; a repeated header is one list', () => {
    expect(anthropicBetasOf({ 'anthropic-beta': 'files-api-2025-04-14' })).toEqual(['files-api-2025-04-14']);
    expect(anthropicBetasOf({ 'anthropic-beta': 'context-1m-2025-08-07, token-efficient-tools-2025-02-19,context-1m-2025-08-07' }))
      .toEqual(['context-1m-2025-08-07', 'token-efficient-tools-2025-02-19']);
    expect(anthropicBetasOf({ 'anthropic-beta': ['output-128k-2025-02-19', 'interleaved-thinking-2025-05-14'] }))
      .toEqual(['output-128k-2025-02-19', 'interleaved-thinking-2025-05-14']);
    expect(anthropicBetasOf({ 'anthropic-beta': Array.from({ length: 16 }, (_, i) => `beta_${i}.v1`).join(',') })).toHaveLength(16);
  });
});
