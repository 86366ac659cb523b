import { Decimal } from 'decimal.js';
import { isTokenCount } from './token-counts.js';

const COUNTS = ['input', 'cachedInput', 'cacheWrite', 'output', 'reasoning'] as const;
type Count = (typeof COUNTS)[number];
/** Which of the cost's parts each count is priced in: a count not believed takes its parts with it. */
const PRICED_IN: Record<Count, ReadonlyArray<'input' | 'cachedInput' | 'cacheWrite' | 'output'>> = {
  input: ['input'],
  cachedInput: ['input', 'cachedInput'],
  cacheWrite: ['input', 'cacheWrite'],
  output: ['output'],
  reasoning: ['output'],
};
const COST_PARTS = ['input', 'cachedInput', 'cacheWrite', 'output'] as const;
const PLAIN_DECIMAL = /^\d{1,30}(\.\d{1,30})?$/;
const ZERO = '0.000000000000';
const REPORTED_VALUE_CHARS = 32;

/**
 * AttemptFinished v1 → v2. Version 1 trusted a provider's usage as it came (OpenAI-shaped usage not at
 * all, the other formats' only partly): negative, fractional, absurdly large counts and costs priced from
 * them were recorded, and one such event stopped the cost ledger. Events are immutable; their reading is
 * not. Version 2 guarantees non-negative integer counts within the plausible bound, so this step applies
 * that rule to an old event with the only bound that needs no request (events/token-counts.ts):
 * - a count that is not a token count is read as 0, and so is every part of the cost it was priced in
 *   (the request's estimate, which the live boundary bills instead, is not in this event);
 * - cached and cache-write tokens above the input, and reasoning above the output, are read as 0;
 * - a cost part that is not a plain non-negative decimal is read as 0;
 * - the total is then the sum of the parts, the evidence `implausible`, and the values as recorded are
 *   kept in `diagnostics` as short strings.
 * An event whose counts and cost were sound is returned as it is.
 */
export function attemptFinishedV1ToV2(data: Record<string, unknown>): Record<string, unknown> {
  const usage = (isObject(data.usage) ? data.usage : {}) as Record<string, unknown>;
  const cost = (isObject(data.cost) ? data.cost : {}) as Record<string, unknown>;
  const reported: Record<string, string> = {};
  let reason: string | null = null;
  const counts = {} as Record<Count, number>;
  const zeroed = new Set<string>();
  for (const count of COUNTS) {
    const value = usage[count];
    if (isTokenCount(value)) {
      counts[count] = value;
      continue;
    }
    reason ??= `usage.${count} is not a plausible token count`;
    reported[`usage.${count}`] = shown(value);
    counts[count] = 0;
    for (const part of PRICED_IN[count]) zeroed.add(part);
  }
  if (counts.cachedInput + counts.cacheWrite > counts.input) {
    reason ??= 'cached and cache-write tokens exceed the input tokens';
    for (const count of ['input', 'cachedInput', 'cacheWrite'] as const) reported[`usage.${count}`] = shown(usage[count]);
    counts.cachedInput = 0;
    counts.cacheWrite = 0;
    for (const part of ['input', 'cachedInput', 'cacheWrite']) zeroed.add(part);
  }
  if (counts.reasoning > counts.output) {
    reason ??= 'reasoning tokens exceed the output tokens';
    reported['usage.output'] = shown(usage.output);
    reported['usage.reasoning'] = shown(usage.reasoning);
    counts.reasoning = 0;
    zeroed.add('output');
  }
  for (const part of COST_PARTS) {
    if (zeroed.has(part) || isPlainDecimal(cost[part])) continue;
    reason ??= `cost.${part} is not a non-negative decimal`;
    reported[`cost.${part}`] = shown(cost[part]);
    zeroed.add(part);
  }
  if (reason === null && isPlainDecimal(cost.total)) return data;
  if (reason === null) {
    reason = 'cost.total is not a non-negative decimal';
    reported['cost.total'] = shown(cost.total);
  }
  const parts = Object.fromEntries(COST_PARTS.map((part) => [part, zeroed.has(part) ? ZERO : new Decimal(cost[part] as string).toFixed(12)])) as Record<
    (typeof COST_PARTS)[number],
    string
  >;
  const total = COST_PARTS.reduce((sum, part) => sum.plus(parts[part]), new Decimal(0)).toFixed(12);
  return Object.assign({}, data, {
    usage: counts,
    cost: Object.assign({}, parts, { total, currency: 'USD' }),
    usageEvidence: 'implausible',
    diagnostics: { implausibleUsage: { reason: `recorded before the usage boundary: ${reason}`, reported } },
  });
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function isPlainDecimal(value: unknown): value is string {
  return typeof value === 'string' && PLAIN_DECIMAL.test(value);
}

function shown(value: unknown): string {
  let text: string;
  if (value === undefined) text = 'absent';
  else if (typeof value === 'string') text = JSON.stringify(value.slice(0, REPORTED_VALUE_CHARS));
  else if (typeof value === 'number' || typeof value === 'boolean' || value === null) text = String(value);
  else text = Array.isArray(value) ? 'array' : typeof value;
  return text.length > REPORTED_VALUE_CHARS ? `${text.slice(0, REPORTED_VALUE_CHARS - 1)}…` : text;
}
