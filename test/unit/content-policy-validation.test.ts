import { contentPolicyProblems, customPatternProblem, normalizeContentPolicy } from '../../modules/content-safety/index.js';

describe('custom detector patterns', () => {
  it.each([
    ['(a+)+$', /nests a repetition/],
    ['(\\w+\\s?)*$', /nests a repetition/],
    ['(x|xx)+y', /backtrack catastrophically/],
    ['\\d+\\d+$', /backtrack catastrophically/],
    ['.*a.*b.*c$', /backtrack catastrophically/],
    ['(a)\\1', /backreference/],
    ['foo(?=bar)', /lookaround/],
    ['(?<!x)y', /lookaround/],
    ['a{1,5000}', /repeats up to 5000/],
    ['[0-9', /not a valid regular expression/],
    ['\\-x', /not a valid regular expression/],
    ['a*', /empty string/],
    ['', /is empty/],
  ])('refuses %s', (pattern, problem) => {
    expect(customPatternProblem(pattern)).toMatch(problem);
  });

  it('refuses a pattern longer than 500 characters', () => {
    expect(customPatternProblem('x'.repeat(501))).toMatch(/longer than 500/);
  });

  it.each(['PRJ-[0-9]{6}', '\\bACME-\\d{4}-[A-Z]{2}\\b', 'sk_live_[A-Za-z0-9]{24}', '(?:ab|cd)-\\d{3}', 'Project (?:Nightingale|Osprey)'])('accepts %s', (pattern) => {
    expect(customPatternProblem(pattern)).toBeNull();
  });
});

describe('content policy definitions', () => {
  const valid = {
    input: {
      email: 'tokenize', phone: 'tokenize', card: 'block', iban: 'mask', national_id: 'mask', secret: 'block', ip_address: 'log',
      custom: [{ name: 'project-code', pattern: 'PRJ-[0-9]{6}', action: 'mask' }],
      deny_terms: { terms: ['project nightingale'], action: 'block' },
      prompt_injection: 'log',
    },
    output: { email: 'mask', secret: 'mask' },
    tokenScope: 'request',
    unresolvedTokenPolicy: 'leave-masked',
  };

  it("accepts issue 36's example as written", () => {
    expect(contentPolicyProblems({ id: 'pii-strict', ...valid }, 'contentPolicies[0]')).toEqual([]);
  });

  it('names every problem with its path, and never echoes a value it refuses as a pattern', () => {
    const problems = contentPolicyProblems({
      input: { email: 'scramble', passport: 'mask', custom: [{ name: 'Bad Name', pattern: '(a+)+', action: 'mask' }, { name: 'x', pattern: 'x', action: 'mask', extra: 1 }] },
      output: { email: 'tokenize', deny_terms: { terms: [], action: 'block' } },
      tokenScope: 'host',
      unresolvedTokenPolicy: 'fail',
      placeholderInstruction: 'yes',
      colour: 'blue',
    }, 'contentPolicies[3]');
    expect(problems).toEqual(expect.arrayContaining([
      'contentPolicies[3].colour: unknown field (expected one of input, output, tokenScope, unresolvedTokenPolicy, placeholderInstruction, webhook, moderation)',
      'contentPolicies[3].input.email: must be one of allow, log, mask, tokenize, block',
      expect.stringMatching(/^contentPolicies\[3\]\.input\.passport: unknown finding type/),
      expect.stringMatching(/^contentPolicies\[3\]\.input\.custom\[0\]\.name: must be 1-40 characters/),
      expect.stringMatching(/^contentPolicies\[3\]\.input\.custom\[0\]\.pattern: nests a repetition/),
      'contentPolicies[3].input.custom[1].extra: unknown field',
      expect.stringMatching(/^contentPolicies\[3\]\.output\.email: must be one of allow, log, mask, block \(an answer cannot be tokenized/),
      'contentPolicies[3].output.deny_terms.terms: must be a non-empty list of strings',
      'contentPolicies[3].tokenScope: must be one of request, session',
      'contentPolicies[3].unresolvedTokenPolicy: must be one of leave-masked, reject-buffered',
      'contentPolicies[3].placeholderInstruction: must be true or false',
    ]));
    expect(problems).toHaveLength(11);
  });

  it('refuses shapes that are not objects, duplicate custom names and oversized lists', () => {
    expect(contentPolicyProblems('strict', 'p')).toEqual(['p: must be an object']);
    expect(contentPolicyProblems({ input: [] }, 'p')).toEqual(['p.input: must be an object of finding type → action']);
    expect(contentPolicyProblems({ input: { custom: [{ name: 'a', pattern: 'x', action: 'mask' }, { name: 'a', pattern: 'y', action: 'mask' }] } }, 'p'))
      .toEqual(["p.input.custom[1].name: 'a' is declared twice"]);
    const many = Array.from({ length: 51 }, (_, i) => ({ name: `c${i}`, pattern: 'x', action: 'mask' }));
    expect(contentPolicyProblems({ input: { custom: many } }, 'p')).toEqual(['p.input.custom: at most 50 custom patterns']);
    expect(contentPolicyProblems({ input: { deny_terms: { terms: ['ok', ' ', 'x'.repeat(201)], action: 'block' } } }, 'p')).toEqual([
      'p.input.deny_terms.terms[1]: must be a non-blank string of at most 200 characters',
      'p.input.deny_terms.terms[2]: must be a non-blank string of at most 200 characters',
    ]);
  });

  it('normalizes: defaults filled, rules in a stable order, so the same policy declared twice compares equal', () => {
    const a = normalizeContentPolicy({ input: { phone: 'mask', email: 'tokenize' } });
    const b = normalizeContentPolicy({ input: { email: 'tokenize', phone: 'mask' }, output: {}, tokenScope: 'request', unresolvedTokenPolicy: 'leave-masked', placeholderInstruction: false });
    expect(JSON.stringify(a)).toEqual(JSON.stringify(b));
    expect(a).toEqual({ input: { email: 'tokenize', phone: 'mask' }, output: {}, tokenScope: 'request', unresolvedTokenPolicy: 'leave-masked', placeholderInstruction: false });
  });
});
