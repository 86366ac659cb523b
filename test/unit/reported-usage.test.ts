import { ATTEMPT_TOKEN_CEILING, checkReportedCount, checkReportedPrompt, checkReportedUsage, reportedField, type ReportedUsage } from '../../modules/canonical/index.js';
import { chatReservation } from '../../modules/inference/pipeline/admission-estimate.js';
import { OutputMeter } from '../../modules/inference/pipeline/output-meter.js';
import { chatUsageBound, embeddingsUsageBound } from '../../modules/inference/pipeline/usage-bound.js';
import { usageFromOpenAi } from '../../modules/providers/openai/openai-usage.js';
import { chatRequest, resolvedDeployment } from '../support/provider-fixtures.js';

/**
 * The one boundary where provider numbers enter (issue 32, item 1): every provider format's usage passes
 * checkReportedUsage against a bound derived from the request; anything that is not a plausible count
 * is replaced by the gateway's own, never thrown on, never negative.
 */
const BOUND = { input: 10_000, output: 2_000 };
const COUNTED = { input: 120, output: 35 };

const openAi = (fields: Record<string, unknown>): ReportedUsage => usageFromOpenAi({ prompt_tokens: 100, completion_tokens: 20, ...fields } as never);

describe('checkReportedUsage', () => {
  test('sound counts are believed exactly, and nothing is reported', () => {
    expect(checkReportedUsage(openAi({ prompt_tokens_details: { cached_tokens: 40 }, completion_tokens_details: { reasoning_tokens: 5 } }), BOUND, COUNTED)).toEqual({
      usage: { input: 100, cachedInput: 40, cacheWrite: 0, output: 20, reasoning: 5 },
      implausible: null,
    });
  });

  test.each([
    ['negative', -1_000_000, '-1000000', 'is not a non-negative integer'],
    ['fractional', 10.7, '10.7', 'is not a non-negative integer'],
    ['a numeric string', '100', '"100"', 'is not a non-negative integer'],
    ['the string NaN', 'NaN', '"NaN"', 'is not a non-negative integer'],
    ['NaN itself', Number.NaN, 'NaN', 'is not a non-negative integer'],
    ['Infinity (what 1e400 parses to)', Number.POSITIVE_INFINITY, 'Infinity', 'is not a non-negative integer'],
    ['1e308 (not a safe integer)', 1e308, '1e+308', 'is not a non-negative integer'],
    ['2e9', 2e9, '2000000000', 'is above the plausible 10000'],
    ['an object', { n: 1 }, 'object', 'is not a non-negative integer'],
    ['a long string', 'x'.repeat(10_000), `"${'x'.repeat(30)}…`, 'is not a non-negative integer'],
    ['absent', null, 'null', 'is missing'],
  ])('a prompt count that is %s is billed at the gateway\'s input and reported as a short string', (_name, value, shown, why) => {
    const checked = checkReportedUsage(openAi({ prompt_tokens: value }), BOUND, COUNTED);
    expect(checked.usage).toEqual({ input: COUNTED.input, cachedInput: 0, cacheWrite: 0, output: 20, reasoning: 0 });
    expect(checked.implausible!.reason).toBe(`prompt_tokens ${why}`);
    expect(checked.implausible!.reported.prompt_tokens).toBe(shown);
    expect(checked.implausible!.reported.prompt_tokens.length).toBeLessThanOrEqual(32);
  });

  test.each([[-5], [7.5], ['20'], [1e308], [2e9], [null]])('an output count of %p is billed at the gateway\'s count of what it relayed', (value) => {
    const checked = checkReportedUsage(openAi({ completion_tokens: value }), BOUND, COUNTED);
    expect(checked.usage).toEqual({ input: 100, cachedInput: 0, cacheWrite: 0, output: COUNTED.output, reasoning: 0 });
    expect(checked.implausible).not.toBeNull();
  });

  test('the gateway\'s own counts are held to the bound too (a counted answer can never exceed what is plausible)', () => {
    const checked = checkReportedUsage(openAi({ prompt_tokens: -1, completion_tokens: -1 }), BOUND, { input: 1e12, output: 1e12 });
    expect(checked.usage).toMatchObject({ input: BOUND.input, output: BOUND.output });
  });

  test('parts that disagree: cached above input, reasoning above output — the parts are dropped (priced as plain input or output)', () => {
    const cached = checkReportedUsage(openAi({ prompt_tokens_details: { cached_tokens: 500 } }), BOUND, COUNTED);
    expect(cached.usage).toEqual({ input: 100, cachedInput: 0, cacheWrite: 0, output: 20, reasoning: 0 });
    expect(cached.implausible!.reason).toBe('cached and cache-write tokens exceed the input tokens');
    const reasoning = checkReportedUsage(openAi({ completion_tokens_details: { reasoning_tokens: 21 } }), BOUND, COUNTED);
    expect(reasoning.usage).toEqual({ input: 100, cachedInput: 0, cacheWrite: 0, output: 20, reasoning: 0 });
    expect(reasoning.implausible!.reason).toBe('reasoning tokens exceed the output tokens');
  });

  test('a sum of parts (Anthropic input = input + cache reads + cache writes) is bounded as a whole; a non-count part names itself', () => {
    const usage: ReportedUsage = {
      input: [reportedField('input_tokens', 6000, true), reportedField('cache_read_input_tokens', 6000)],
      cachedInput: [reportedField('cache_read_input_tokens', 6000)],
      cacheWrite: [],
      output: [reportedField('output_tokens', 3, true)],
      reasoning: [],
    };
    const checked = checkReportedUsage(usage, BOUND, COUNTED);
    expect(checked.implausible!.reason).toBe('input_tokens + cache_read_input_tokens is above the plausible 10000');
    // The input was replaced by the gateway's count, which the cache reads then exceed: they are priced as plain input.
    expect(checked.usage).toEqual({ input: COUNTED.input, cachedInput: 0, cacheWrite: 0, output: 3, reasoning: 0 });
  });

  test('no bound is above the ceiling, whatever a deployment declares', () => {
    const checked = checkReportedUsage(openAi({ prompt_tokens: ATTEMPT_TOKEN_CEILING + 1 }), { input: 1e15, output: 1e15 }, COUNTED);
    expect(checked.implausible).not.toBeNull();
    expect(checkReportedCount(ATTEMPT_TOKEN_CEILING, 1e15)).toBe(ATTEMPT_TOKEN_CEILING);
    expect(checkReportedCount(ATTEMPT_TOKEN_CEILING + 1, 1e15)).toBeNull();
    expect(checkReportedCount('12', 100)).toBeNull();
    expect(checkReportedCount(-1, 100)).toBeNull();
  });

  test('a prompt count reported before the output is believed or not as a whole', () => {
    const prompt = (input: unknown, cached: unknown) => ({ input: [reportedField('input_tokens', input, true)], cachedInput: [reportedField('cache_read_input_tokens', cached)], cacheWrite: [] });
    expect(checkReportedPrompt(prompt(300, 100), BOUND)).toEqual({ input: 300, cachedInput: 100, cacheWrite: 0 });
    expect(checkReportedPrompt(prompt(-3, 0), BOUND)).toBeNull();
    expect(checkReportedPrompt(prompt(300, 400), BOUND)).toBeNull();
    expect(checkReportedPrompt(prompt(1e308, 0), BOUND)).toBeNull();
  });
});

describe('the bound a request sets (usage-bound.ts)', () => {
  const deployment = { ...resolvedDeployment('openai'), contextWindow: 128_000, maxOutputTokens: 16_384 };

  test('input: the context window (or twice the estimate), output: twice the larger cap per choice, times n, each with a margin', () => {
    expect(chatUsageBound(chatRequest(), deployment, 50)).toEqual({ input: 128_000 + 1024, output: 2 * 16_384 + 1024 });
    expect(chatUsageBound(chatRequest({ n: 4, maxOutputTokens: 20_000 }), deployment, 200_000)).toEqual({ input: 400_000 + 1024, output: 4 * (40_000 + 1024) });
    expect(chatUsageBound(chatRequest({ reasoning: { effort: null, budgetTokens: 32_000 } }), deployment, 10).output).toBe(64_000 + 1024);
  });

  test('the issue\'s case: 2e9 + 2e9 tokens on a 128k deployment are not believed; the request is billed at the gateway\'s count', () => {
    const bound = chatUsageBound(chatRequest(), deployment, 30);
    const checked = checkReportedUsage(openAi({ prompt_tokens: 2e9, completion_tokens: 2e9 }), bound, { input: 30, output: 12 });
    expect(checked.usage).toEqual({ input: 30, cachedInput: 0, cacheWrite: 0, output: 12, reasoning: 0 });
  });

  test('embeddings: every input within the window, no output', () => {
    expect(embeddingsUsageBound({ model: 'e', inputs: ['a', 'b', 'c'], dimensions: null, user: null }, { ...deployment, contextWindow: 8192 }, 9)).toEqual({ input: 3 * 8192 + 1024, output: 0 });
  });
});

describe('the output meter (one boundary for streams and buffered answers)', () => {
  const terms = { estimatedInputTokens: 77, bound: BOUND };

  test('a provider that reported nothing: the estimate and the relayed output, evidence counted', () => {
    const meter = new OutputMeter();
    meter.observe({ type: 'text', choice: 0, text: 'x'.repeat(40) });
    expect(meter.usage(terms)).toEqual({ usage: { input: 77, cachedInput: 0, cacheWrite: 0, output: 10, reasoning: 0 }, evidence: 'counted', implausible: null });
  });

  test('an implausible final usage: evidence implausible, the gateway\'s counts, the provider\'s numbers kept', () => {
    const meter = new OutputMeter();
    meter.observe({ type: 'text', choice: 0, text: 'x'.repeat(40) });
    meter.observe({ type: 'usage', usage: openAi({ prompt_tokens: 3_000_000_000, completion_tokens: -4 }) });
    const metered = meter.usage(terms);
    expect(metered.usage).toEqual({ input: 77, cachedInput: 0, cacheWrite: 0, output: 10, reasoning: 0 });
    expect(metered.evidence).toBe('implausible');
    expect(metered.implausible!.reported).toEqual({ prompt_tokens: '3000000000', completion_tokens: '-4' });
  });

  test('a stream cut after an implausible prompt count: the estimate, and the prompt reported implausible', () => {
    const meter = new OutputMeter();
    meter.observe({ type: 'prompt_usage', usage: { input: [reportedField('input_tokens', -9, true)], cachedInput: [], cacheWrite: [] } });
    meter.observe({ type: 'text', choice: 0, text: 'abcd' });
    const metered = meter.usage(terms);
    expect(metered.usage).toEqual({ input: 77, cachedInput: 0, cacheWrite: 0, output: 1, reasoning: 0 });
    expect(metered.evidence).toBe('implausible');
  });
});

describe('the reservation multiplies by n (issue 32, item 6)', () => {
  test('n choices reserve n times the output cap; the prompt once; one choice must fit the context window', () => {
    const reservation = chatReservation(chatRequest({ n: 128, maxOutputTokens: 16_000 }));
    expect(reservation.outputTokensPerChoice).toBe(16_000);
    expect(reservation.outputTokens).toBe(128 * 16_000);
    expect(chatReservation(chatRequest({ n: 3 })).outputTokens).toBe(3 * 1024);
    expect(chatReservation(chatRequest()).outputTokens).toBe(1024);
  });
});
