import type { ContentPolicyDefinition } from '../../events/index.js';
import {
  MAX_PLACEHOLDER_LENGTH, OUTPUT_OVERLAP, OutputStream, PlaceholderKeys, PlaceholderRecoveryStream, RequestTokenVault, applyOutputPolicy, compilePolicy, recoverText,
} from '../../modules/content-safety/index.js';
import { seededRandom } from '../fixtures/content-safety/corpus.js';

const keys = PlaceholderKeys.random();

/** Splits `text` at random UTF-16 offsets (so surrogate pairs and placeholders are cut anywhere), or one unit per chunk. */
function chunks(text: string, random: () => number, mode: 'random' | 'single'): string[] {
  if (mode === 'single') return [...Array(text.length).keys()].map((i) => text[i]);
  const out: string[] = [];
  for (let at = 0; at < text.length;) {
    const size = 1 + Math.floor(random() * (random() < 0.5 ? 4 : 60));
    out.push(text.slice(at, at + size));
    at += size;
  }
  return out;
}

/** A text made of prose, emoji (surrogate pairs), brackets, and placeholders: own, foreign, altered, cut, near misses. */
function hostileText(random: () => number, vault: RequestTokenVault, foreign: RequestTokenVault): string {
  const own = ['ann@example.com', '+44 20 7946 0958', 'DE89 3704 0044 0532 0130 00'].map((value, i) => vault.tokenize(i === 0 ? 'email' : i === 1 ? 'phone' : 'iban', value));
  const other = foreign.tokenize('email', 'bob@example.com');
  const pieces = [
    () => 'plain words ', () => '😀', () => '𝄞 ', () => '[', () => '[PII', () => '[PII1_', () => '[PII1_EMAIL_', () => '] ', () => 'é', () => '\n',
    () => own[Math.floor(random() * own.length)], () => other, () => own[0].slice(0, 1 + Math.floor(random() * (own[0].length - 1))),
    () => own[1].replace(/_([A-Z2-7])/, (_, c: string) => `_${c === 'A' ? 'B' : 'A'}`), () => `[${own[2]}]`, () => `[[${own[0]}`,
  ];
  let text = '';
  const count = 20 + Math.floor(random() * 60);
  for (let i = 0; i < count; i++) text += pieces[Math.floor(random() * pieces.length)]();
  return text;
}

describe('placeholder recovery in streams', () => {
  test('fuzzed over random and one-unit chunkings, the stream gives exactly what buffered recovery gives', () => {
    for (let seed = 1; seed <= 80; seed++) {
      const random = seededRandom(seed);
      const vault = new RequestTokenVault(keys, 'acme', 'r1');
      const text = hostileText(random, vault, new RequestTokenVault(keys, 'acme', 'r2'));
      const buffered = recoverText(text, vault);
      for (const mode of ['random', 'single'] as const) {
        const stream = new PlaceholderRecoveryStream(vault);
        let out = '';
        for (const chunk of chunks(text, random, mode)) {
          const released = stream.push(chunk);
          // Never a lone high surrogate at the end of what is released: its pair is held with it.
          if (released.length > 0) expect(/[\uD800-\uDBFF]$/.test(released)).toBe(false);
          out += released;
        }
        out += stream.end();
        expect({ seed, mode, out }).toEqual({ seed, mode, out: buffered.text });
        expect([stream.resolved, stream.unresolved]).toEqual([buffered.resolved, buffered.unresolved]);
      }
    }
  });

  test('holds back at most one placeholder\'s length, and releases at once what cannot start one', () => {
    const stream = new PlaceholderRecoveryStream(new RequestTokenVault(keys, 'acme', 'r1'));
    expect(stream.push('hello [')).toBe('hello ');
    expect(stream.push('x')).toBe('[x');
    expect(stream.push('[PII1_EMAIL_ABC')).toBe('');
    expect(stream.push('!')).toBe('[PII1_EMAIL_ABC!');
    const random = seededRandom(9);
    let input = 0;
    let released = 0;
    const text = '[PII1_CUSTOM_AAAAAAAAAAAAA_AAAAAAAAA'.repeat(30);
    for (const chunk of chunks(text, random, 'random')) {
      input += chunk.length;
      released += stream.push(chunk).length;
      expect(input - released).toBeLessThan(MAX_PLACEHOLDER_LENGTH);
    }
  });

  test('a placeholder split across every pair of chunks is recovered', () => {
    const vault = new RequestTokenVault(keys, 'acme', 'r1');
    const placeholder = vault.tokenize('email', 'ann@example.com');
    const text = `a ${placeholder} b`;
    for (let cut = 0; cut <= text.length; cut++) {
      const stream = new PlaceholderRecoveryStream(vault);
      expect(stream.push(text.slice(0, cut)) + stream.push(text.slice(cut)) + stream.end()).toBe('a ann@example.com b');
    }
  });
});

describe('output checks in streams', () => {
  const definition: ContentPolicyDefinition = {
    input: { email: 'tokenize' }, output: { email: 'mask', card: 'mask', secret: 'block' },
    tokenScope: 'request', unresolvedTokenPolicy: 'leave-masked', placeholderInstruction: false,
  };
  const compiled = compilePolicy(definition);

  test('fuzzed chunkings give what the buffered check gives: masks of findings cut anywhere, placeholders recovered', () => {
    const values = ['new@example.org', '4111 1111 1111 1111', 'words and more words', '😀 ', '\n', '[', 'x.y@z', 'PII1_'];
    for (let seed = 1; seed <= 20; seed++) {
      const random = seededRandom(seed);
      const vault = new RequestTokenVault(keys, 'acme', 'r1');
      const own = vault.tokenize('email', 'ann@example.com');
      let text = '';
      const count = 10 + Math.floor(random() * 80);
      for (let i = 0; i < count; i++) text += random() < 0.15 ? ` ${own} ` : `${values[Math.floor(random() * values.length)]} `;
      const buffered = applyOutputPolicy(text, { rules: compiled.output, vault });
      for (const mode of ['random', 'single'] as const) {
        const stream = new OutputStream({ rules: compiled.output, vault });
        let out = '';
        for (const chunk of chunks(text, random, mode)) {
          const release = stream.push(chunk);
          expect(release.blocked).toBeNull();
          out += release.text;
        }
        const last = stream.end();
        out += last.text;
        expect({ seed, mode, out }).toEqual({ seed, mode, out: buffered.text });
        expect(stream.counts.lines()).toEqual(buffered.counts.lines());
        expect(stream.resolved).toBe(buffered.resolved);
      }
    }
  });

  test('holdback with output rules stays under twice the overlap plus one placeholder', () => {
    const stream = new OutputStream({ rules: compiled.output, vault: new RequestTokenVault(keys, 'acme', 'r1') });
    let input = 0;
    let released = 0;
    for (let i = 0; i < 500; i++) {
      input += 7;
      released += stream.push('words. ').text.length;
      expect(input - released).toBeLessThan(2 * OUTPUT_OVERLAP + MAX_PLACEHOLDER_LENGTH);
    }
  });

  test('a block releases the clean text before it, names the type, and releases nothing after', () => {
    const stream = new OutputStream({ rules: compiled.output });
    const before = 'The answer is here. '.repeat(20);
    let out = '';
    let blocked = null;
    for (const chunk of chunks(`${before}key sk-proj-abcdefghijklmnop1234 and then more text ${'tail '.repeat(60)}`, seededRandom(3), 'random')) {
      const release = stream.push(chunk);
      out += release.text;
      if (release.blocked) { blocked = release.blocked; break; }
    }
    expect(blocked).toBe('secret');
    expect(out).toBe(`${before}key `);
    expect(stream.push('more')).toEqual({ text: '', blocked: null });
    expect(stream.end()).toEqual({ text: '', blocked: null });
    expect(stream.counts.lines()).toEqual([{ type: 'secret', direction: 'output', action: 'block', count: 1 }]);
  });

  test('without output rules a channel is recovery alone (no window holdback)', () => {
    const vault = new RequestTokenVault(keys, 'acme', 'r1');
    const stream = new OutputStream({ rules: compilePolicy({ ...definition, output: {} }).output, vault });
    expect(stream.push('hello world').text).toBe('hello world');
  });

  test('a finding longer than the window keeps growing: released in masked parts, never whole in the clear', () => {
    const stream = new OutputStream({ rules: compilePolicy({ ...definition, output: { secret: 'mask' } }).output, overlap: 64 });
    const block = `-----BEGIN PRIVATE KEY-----\n${'A'.repeat(2_000)}\n-----END PRIVATE KEY-----`;
    let out = '';
    for (const chunk of chunks(`x ${block} y`, seededRandom(5), 'random')) out += stream.push(chunk).text;
    out += stream.end().text;
    expect(out).not.toContain('AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(out).toBe('x [SECRET] y');
  });
});

describe('recovery into tool-call arguments (JSON)', () => {
  test('a value with quotes, backslashes and newlines is escaped for the JSON string it lands in, buffered and streamed', () => {
    const vault = new RequestTokenVault(keys, 'acme', 'r1');
    const value = 'line one\nsays "hi" \\ back';
    const placeholder = vault.tokenize('secret', value);
    const args = `{"note":"${placeholder}","n":1}`;
    expect(JSON.parse(recoverText(args, vault, 'json').text)).toEqual({ note: value, n: 1 });
    const stream = new PlaceholderRecoveryStream(vault, 'json');
    let out = '';
    for (const chunk of chunks(args, seededRandom(4), 'single')) out += stream.push(chunk);
    out += stream.end();
    expect(JSON.parse(out)).toEqual({ note: value, n: 1 });
    const output = new OutputStream({ rules: compilePolicy({ input: {}, output: { email: 'mask' }, tokenScope: 'request', unresolvedTokenPolicy: 'leave-masked', placeholderInstruction: false }).output, vault, encoding: 'json' });
    const streamed = output.push(args).text + output.end().text;
    expect(JSON.parse(streamed)).toEqual({ note: value, n: 1 });
  });
});
