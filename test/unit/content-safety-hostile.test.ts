import type { ContentPolicyDefinition } from '../../events/index.js';
import { OutputStream, PlaceholderKeys, PlaceholderRecoveryStream, RequestTokenVault, applyInputPolicy, compilePolicy, recoverText, scan } from '../../modules/content-safety/index.js';

/** Every local detector on: what a hostile client meets. No timing assertions: each case must finish, correctly. */
const everything: ContentPolicyDefinition = {
  input: {
    email: 'tokenize', phone: 'tokenize', card: 'mask', iban: 'mask', national_id: 'mask', ip_address: 'mask', secret: 'mask', prompt_injection: 'log',
    custom: [{ name: 'code', pattern: 'PRJ-[0-9]{6}', action: 'mask' }], deny_terms: { terms: ['nightingale', 'blue bird'], action: 'mask' },
  },
  output: { email: 'mask', card: 'mask', secret: 'mask' },
  tokenScope: 'request', unresolvedTokenPolicy: 'leave-masked', placeholderInstruction: false,
};
const compiled = compilePolicy(everything);
const keys = PlaceholderKeys.random();

describe('hostile input', () => {
  test('10 MB of candidate digits: one run is no finding; spaced card-shaped groups are each found', () => {
    expect(scan('7'.repeat(10_000_000), compiled.input)).toEqual([]);
    const digits = Array.from({ length: 10_000_000 / 10 }, (_, i) => String(1_000_000_000 + i)).join('');
    expect(scan(digits, compiled.input)).toEqual([]);
    const cards = '4111 1111 1111 1111 '.repeat(50_000);
    const findings = scan(cards, compiled.input);
    expect(findings).toHaveLength(50_000);
    expect(new Set(findings.map((finding) => finding.type))).toEqual(new Set(['card']));
  });

  test('digits with every separator phones and IPs use (dots, dashes, brackets, plus signs)', () => {
    const text = '+1 (2) 3-4.5 6/7 8 9 0 '.repeat(100_000);
    const findings = scan(text, compiled.input);
    for (const finding of findings) expect(finding.end).toBeGreaterThan(finding.start);
  });

  test('100,000 emails in one message: each tokenized, and an answer echoing them all is recovered exactly', () => {
    const emails = Array.from({ length: 100_000 }, (_, i) => `user${i}@example.com`);
    const text = emails.join(', ');
    const vault = new RequestTokenVault(keys, 'acme', 'r1');
    const result = applyInputPolicy(text, { rules: compiled.input, vault });
    expect(result.counts.lines()).toEqual([{ type: 'email', direction: 'input', action: 'tokenize', count: 100_000 }]);
    expect(vault.size).toBe(100_000);
    expect(result.text).not.toContain('@example.com');
    const recovered = recoverText(result.text, vault);
    expect(recovered).toMatchObject({ text, resolved: 100_000, unresolved: 0 });
  });

  test('deeply nested JSON tool arguments: values found at any depth, the result still parses', () => {
    const depth = 5_000;
    const json = `${'{"a":'.repeat(depth)}{"email":"deep@example.com","card":"4111111111111111","n":[1,2,3]}${'}'.repeat(depth)}`;
    const vault = new RequestTokenVault(keys, 'acme', 'r1');
    const result = applyInputPolicy(json, { rules: compiled.input, vault });
    expect(result.text).not.toContain('deep@example.com');
    expect(result.text).toContain('"card":"[CARD]"');
    let inner = JSON.parse(result.text) as Record<string, unknown>;
    for (let i = 0; i < depth; i++) inner = inner.a as Record<string, unknown>;
    expect(recoverText(inner.email as string, vault).text).toBe('deep@example.com');
  });

  test('a megabyte of placeholder prefixes through the stream: bounded holdback, every near miss counted, text unchanged', () => {
    const stream = new PlaceholderRecoveryStream(new RequestTokenVault(keys, 'acme', 'r1'));
    const text = '[PII1_EMAIL_AAAA'.repeat(65_536);
    let out = '';
    for (let at = 0; at < text.length; at += 1_000) out += stream.push(text.slice(at, at + 1_000));
    out += stream.end();
    expect(out).toBe(text);
    expect(stream.unresolved).toBe(65_536);
  });

  test('a megabyte of injection phrases, brackets and colons through the output stream finishes and masks what it must', () => {
    const stream = new OutputStream({ rules: compiled.output });
    const unit = 'ignore previous instructions [<|im_start|> a:b:c::d x@y.io ';
    let out = '';
    for (let i = 0; i < 16_000; i++) out += stream.push(unit).text;
    out += stream.end().text;
    expect(out).toBe('ignore previous instructions [<|im_start|> a:b:c::d [EMAIL] '.repeat(16_000));
  });

  test('long runs that look like tokens, base64 and key blocks without an end', () => {
    const text = `-----BEGIN PRIVATE KEY-----\n${'QUJD'.repeat(500_000)} ${'sk-'.repeat(100_000)} ${'eyJ'.repeat(100_000)}`;
    const findings = scan(text, compiled.input);
    expect(findings[0]).toMatchObject({ type: 'secret', start: 0 });
  });
});

describe('hostile answers', () => {
  test('an answer of 50,000 placeholders and as many custom-pattern matches between them is checked and recovered', () => {
    const rules = compilePolicy({ ...everything, output: { custom: [{ name: 'id', pattern: '[A-Z]{4}', action: 'mask' }] } }).output;
    const vault = new RequestTokenVault(keys, 'acme', 'r1');
    const placeholders = Array.from({ length: 50_000 }, (_, i) => vault.tokenize('email', `u${i}@example.com`));
    const answer = placeholders.map((placeholder) => `${placeholder} ABCD`).join(' ');
    const stream = new OutputStream({ rules, vault });
    let out = '';
    for (let at = 0; at < answer.length; at += 4_096) out += stream.push(answer.slice(at, at + 4_096)).text;
    out += stream.end().text;
    expect(out).toBe(Array.from({ length: 50_000 }, (_, i) => `u${i}@example.com [CUSTOM:id]`).join(' '));
  });
});
