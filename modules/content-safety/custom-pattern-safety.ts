import { RegExpParser, RegExpSyntaxError, visitRegExpAST, type AST } from '@eslint-community/regexpp';
import { analyse } from 'scslre';

/** The flags every custom pattern runs with: global (all matches) and Unicode-aware (strict syntax, code points). */
export const CUSTOM_PATTERN_FLAGS = 'gu';

/** Longest custom pattern accepted, in characters: a detector, not a program. */
export const MAX_CUSTOM_PATTERN_LENGTH = 500;

/** Largest bounded repetition (`{n,m}`) a custom pattern may ask for. */
const MAX_REPETITION = 1_000;

/**
 * Why a custom detector pattern is refused, or null when it is safe to run on every request.
 *
 * Content is attacker-controlled, so a pattern whose matching time can grow faster than linearly with its input
 * (catastrophic backtracking) would let one request stall a node. JavaScript has no linear-time engine built in,
 * so patterns are restricted to a subset that backtracks at most linearly, checked in two layers:
 * - structure: no backreferences or lookarounds, and no quantified group that itself contains a quantifier
 *   (star height 1 — the shape behind nearly every exponential case, `(a+)+`, `(\w+\s?)*`);
 * - analysis: scslre's static search for super-linear backtracking (`\d+\d+`, `.*a.*`-style polynomial cases),
 *   every report of which refuses the pattern.
 * Refusing a safe pattern now and then is the price: the message says what to change.
 */
export function customPatternProblem(pattern: string): string | null {
  if (pattern.length === 0) return 'is empty';
  if (pattern.length > MAX_CUSTOM_PATTERN_LENGTH) return `is longer than ${MAX_CUSTOM_PATTERN_LENGTH} characters`;
  let ast: AST.Pattern;
  try {
    ast = new RegExpParser({ ecmaVersion: 2024 }).parsePattern(pattern, 0, pattern.length, { unicode: true });
  } catch (error) {
    if (error instanceof RegExpSyntaxError) return `is not a valid regular expression (${error.message.replace(/^Invalid regular expression: /, '')})`;
    throw error;
  }
  const structural = structuralProblem(ast);
  if (structural) return structural;
  const literal = new RegExpParser({ ecmaVersion: 2024 }).parseLiteral(`/${pattern.replace(/\//g, '\\/')}/${CUSTOM_PATTERN_FLAGS}`);
  const reports = analyse(literal, { maxReports: 1 }).reports;
  if (reports.length > 0) {
    const report = reports[0]!;
    const quantifier = 'quant' in report ? report.quant.raw : report.startQuant.raw;
    return `can backtrack catastrophically (${report.exponential ? 'exponential' : 'polynomial'} time at \`${quantifier}\`): make the repeated parts unable to match the same text, e.g. bound them or give them distinct characters`;
  }
  if (new RegExp(pattern, CUSTOM_PATTERN_FLAGS).test('')) return 'matches the empty string (it would match everywhere)';
  return null;
}

function structuralProblem(ast: AST.Pattern): string | null {
  let problem: string | null = null;
  const note = (text: string) => {
    problem ??= text;
  };
  visitRegExpAST(ast, {
    onBackreferenceEnter: () => note('uses a backreference (not allowed: it makes matching time unbounded)'),
    onAssertionEnter: (node) => {
      if (node.kind === 'lookahead' || node.kind === 'lookbehind') note('uses a lookaround (not allowed in custom patterns; `\\b`, `^` and `$` are)');
    },
    onQuantifierEnter: (node) => {
      if (node.max !== Infinity && node.max > MAX_REPETITION) note(`repeats up to ${node.max} times (at most ${MAX_REPETITION})`);
      if (containsQuantifier(node.element)) note(`nests a repetition inside a repetition (\`${node.raw}\`): flatten it`);
    },
  });
  return problem;
}

function containsQuantifier(element: AST.Node): boolean {
  let found = false;
  visitRegExpAST(element as AST.Pattern, {
    onQuantifierEnter: () => {
      found = true;
    },
  });
  return found;
}
