import { countTokens } from '../../modules/canonical/tokenizer.js';
import { estimateInputTokens } from '../../modules/canonical/token-estimate.js';
import { type ChatRequest, UNSET_PARAMETERS } from '../../modules/canonical/chat-request.js';

describe('tokenizer', () => {
  it('counts with cl100k_base, not a character heuristic', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('Hello, world!')).toBe(4);
    // "antidisestablishmentarianism" is 28 characters: 7 by chars/4, 6 by cl100k.
    expect(countTokens('antidisestablishmentarianism')).toBe(6);
  });

  it('counts a long run without whitespace quickly and never under-counts it', () => {
    const run = 'a'.repeat(200_000);
    const started = process.hrtime.bigint();
    const slices = countTokens(run);
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    expect(slices).toBeGreaterThanOrEqual(countTokens('a'.repeat(256)) * Math.floor(200_000 / 256));
    expect(elapsedMs).toBeLessThan(5_000); // unsliced, 20,000 characters alone take ~30 s
  });

  it('adds the chat template overhead per message and counts tools', () => {
    const request = {
      model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello, world!' }] }],
      maxOutputTokens: null, temperature: null, topP: null, stop: [], stream: false, includeUsage: false,
      tools: [], toolChoice: null, parallelToolCalls: null, responseFormat: null, seed: null, user: null, metadata: null, n: 1, ...UNSET_PARAMETERS,
    } as ChatRequest;
    expect(estimateInputTokens(request)).toBe(3 + 3 + 4);
    const withTool = { ...request, tools: [{ name: 'lookup', description: null, parameters: { type: 'object' }, strict: null }] };
    expect(estimateInputTokens(withTool)).toBeGreaterThan(estimateInputTokens(request) + 8);
  });
});
