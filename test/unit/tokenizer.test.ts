import { Tiktoken } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
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

  it('counts exactly what encoding the whole text counts, the first time and once its pieces are known', () => {
    const whole = new Tiktoken(cl100kBase);
    const reference = (text: string) => whole.encode(text, [], []).length;
    // Pieces of every kind cl100k's pattern splits into: contractions, words with a leading mark,
    // digit groups, punctuation runs with newlines, whitespace runs before words, at the end, alone.
    const alphabet = ["'s", "'LL", "'re", 'a', 'Z', 'é', 'ß', 'Ж', '中文', 'ت', '😀', '1', '42', '12345', '.', ',', '!?', '…', '--', '{', '}', '"', '_', '\n', '\r\n', '\t', ' ', '   ', '\u00a0'];
    let seed = 12345;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const texts: string[] = [];
    for (let t = 0; t < 300; t++) {
      let text = '';
      const parts = 1 + Math.floor(random() * 120);
      for (let p = 0; p < parts; p++) {
        text += alphabet[Math.floor(random() * alphabet.length)];
        if (random() < 0.25) text += ' '; // no run of 33 non-space characters (those are sliced)
      }
      texts.push(text);
    }
    texts.push('Hello, world!', "I'm sure they'll say it's fine.\n\n  Indented\tline   \n", '   leading and trailing   ', '\n\n\n', '2024-12-01 18:30:00');
    for (const text of texts) expect(countTokens(text)).toBe(reference(text));
    for (const text of texts) expect(countTokens(text)).toBe(reference(text));
  });

  it('counts a special-token marker in the text as text, without throwing', () => {
    // "<|endoftext|>" is one special token to the model's own template, and text in a client's prompt.
    expect(countTokens('hi <|endoftext|> there')).toBe(countTokens('hi <|') + countTokens('endoftext') + countTokens('|> there'));
    expect(countTokens('<|endoftext|><|fim_prefix|>')).toBeGreaterThan(2);
  });

  it('counts a long run without whitespace in slices, never under-counting it', () => {
    const run = 'a'.repeat(4_096);
    expect(countTokens(run)).toBe(countTokens('a'.repeat(32)) * 128);
    expect(countTokens(`hello ${run} world`)).toBe(countTokens('hello ') + countTokens(run) + countTokens(' world'));
  });

  it('extrapolates beyond 16,384 characters from the exactly counted head', () => {
    const sentence = 'The quick brown fox jumps over the lazy dog. ';
    const long = sentence.repeat(2_000); // 90,000 characters
    const head = countTokens(long.slice(0, 16_384));
    expect(countTokens(long)).toBe(Math.ceil((head * long.length) / 16_384));
    expect(Math.abs(countTokens(long) - 10 * 2_000) / 20_000).toBeLessThan(0.01); // 10 tokens per sentence
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

describe('estimateInputTokens on a large request', () => {
  it('tokenizes the first 65,536 characters exactly and counts the rest at their ratio', () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(360); // 16,200 characters, 3,600 tokens
    const messages = Array.from({ length: 10 }, () => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] }));
    const request = {
      model: 'm', messages, maxOutputTokens: null, temperature: null, topP: null, stop: [], stream: false, includeUsage: false,
      tools: [], toolChoice: null, parallelToolCalls: null, responseFormat: null, seed: null, user: null, metadata: null, n: 1, ...UNSET_PARAMETERS,
    } as ChatRequest;
    const perText = countTokens(text);
    // five texts are counted exactly (81,000 characters), the other five at the same ratio: the same total
    expect(estimateInputTokens(request)).toBe(3 + 10 * 3 + 10 * perText);
  });
});
