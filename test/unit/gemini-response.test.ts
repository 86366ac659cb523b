import type { PriceTable } from '../../events/price-events.js';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { attemptCost } from '../../modules/inference/pricing/attempt-cost.js';
import { fromGeminiResponse } from '../../modules/providers/gemini/gemini-response.js';
import { stopReasonFromGemini, usageFromGemini } from '../../modules/providers/gemini/gemini-usage.js';
import { fixtureJson } from '../support/provider-fixtures.js';
import { believedUsage } from '../support/believed-usage.js';
import { checkReportedUsage } from '../../modules/canonical/index.js';

const fixture = (name: string) => fixtureJson('gemini', name);
/** Gemini 2.5 Flash list prices (USD per 1M tokens) at the time of writing. */
const flash: PriceTable = { inputPer1M: '0.30', outputPer1M: '2.50', cachedInputPer1M: '0.075', cacheWritePer1M: null, reasoningPer1M: null, currency: 'USD' };

describe('Gemini generateContent answer → canonical response', () => {
  test('a text answer with thinking: output counts visible and thought tokens, reasoning the thoughts', () => {
    const response = fromGeminiResponse(fixture('generate-content-text.json'));
    expect(response.providerRequestId).toBe('v2Nfa-XYZ0Gz7IPq4Sm2Ak');
    expect(response.choices).toEqual([
      { index: 0, text: 'AI learns patterns from examples and uses them to make predictions about new data.', toolCalls: [], stopReason: 'stop', reasoning: [], logprobs: null },
    ]);
    // candidatesTokenCount 17 + thoughtsTokenCount 1070 = 1087 output tokens; totalTokenCount 1095 = 8 + 1087.
    expect(believedUsage(response.usage)).toEqual({ input: 8, cachedInput: 0, cacheWrite: 0, output: 1087, reasoning: 1070 });
  });

  test('cost of the thinking answer, by hand: thoughts are billed as output (or at a reasoning price when set)', () => {
    const usage = believedUsage(fromGeminiResponse(fixture('generate-content-text.json')).usage);
    // 8 × 0.30 + 1087 × 2.50 = 2.4 + 2717.5 = 2719.9 per 1M → 0.0027199
    expect(attemptCost(usage, flash).total).toBe('0.002719900000');
    // With a separate reasoning price: 8 × 0.30 + 17 × 2.50 + 1070 × 3.50 = 2.4 + 42.5 + 3745 = 3789.9 per 1M
    expect(attemptCost(usage, { ...flash, reasoningPer1M: '3.50' }).total).toBe('0.003789900000');
  });

  test('cached content: promptTokenCount includes it, cached tokens are billed at the cached price; thought summaries are not answer text', () => {
    const response = fromGeminiResponse(fixture('generate-content-cached.json'));
    expect(response.choices[0].text).toBe('The contract renews automatically every twelve months unless either party gives notice.');
    expect(believedUsage(response.usage)).toEqual({ input: 12000, cachedInput: 10000, cacheWrite: 0, output: 550, reasoning: 300 });
    // (12000 − 10000) × 0.30 + 10000 × 0.075 + (250 + 300) × 2.50 = 600 + 750 + 1375 = 2725 per 1M
    const cost = attemptCost(believedUsage(response.usage), flash);
    expect(cost).toMatchObject({ input: '0.000600000000', cachedInput: '0.000750000000', output: '0.001375000000', total: '0.002725000000' });
  });

  test('parallel function calls get stable call_<n> ids, JSON arguments, the thought signature, and stop reason tool_calls', () => {
    const first = fromGeminiResponse(fixture('generate-content-function-call.json'));
    expect(first.choices[0]).toEqual({
      index: 0,
      text: 'Let me check both cities.',
      toolCalls: [
        // Gemini signs only the first of parallel calls.
        { id: 'call_0', name: 'get_current_weather', arguments: '{"location":"Boston, MA","unit":"celsius"}', signature: 'CiQB0e2Kb7nX0fJ2kQyRk3Zb6sV0Y2lQ1Q==' },
        { id: 'call_1', name: 'get_current_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' },
      ],
      stopReason: 'tool_calls',
      reasoning: [],
      logprobs: null,
    });
    // Same answer, same ids: a retried parse or a replay never renames calls.
    expect(fromGeminiResponse(fixture('generate-content-function-call.json')).choices[0].toolCalls.map((c) => c.id)).toEqual(['call_0', 'call_1']);
    expect(believedUsage(first.usage)).toEqual({ input: 63, cachedInput: 0, cacheWrite: 0, output: 22, reasoning: 0 });
  });

  test('an id the model gave its call is kept', () => {
    const body = { candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'fc-7', name: 'f', args: {} } }] }, finishReason: 'STOP' }] };
    expect(fromGeminiResponse(body).choices[0].toolCalls).toEqual([{ id: 'fc-7', name: 'f', arguments: '{}' }]);
  });

  test('an answer stopped by safety filters has no text and stop reason content_filter', () => {
    const response = fromGeminiResponse(fixture('generate-content-safety.json'));
    expect(response.choices).toEqual([{ index: 0, text: '', toolCalls: [], stopReason: 'content_filter', reasoning: [], logprobs: null }]);
    expect(believedUsage(response.usage)).toEqual({ input: 14, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 });
  });

  test('a blocked prompt (promptFeedback.blockReason, no candidates) is a content_policy error, not a fallback', () => {
    let error: unknown;
    try {
      fromGeminiResponse(fixture('generate-content-prompt-blocked.json'));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ errorClass: 'content_policy', fallbackable: false });
    expect((error as ProviderError).providerMessage).toMatch(/SAFETY/);
  });

  test.each([[null], ['text'], [[]], [{}], [{ candidates: [] }]])('%j is a malformed response', (body) => {
    expect(() => fromGeminiResponse(body)).toThrow(expect.objectContaining({ errorClass: 'malformed_response' }));
  });

  test('several candidates (n > 1) keep their indexes', () => {
    const body = {
      candidates: [
        { content: { role: 'model', parts: [{ text: 'A' }] }, finishReason: 'STOP', index: 0 },
        { content: { role: 'model', parts: [{ text: 'B' }] }, finishReason: 'MAX_TOKENS', index: 1 },
      ],
    };
    expect(fromGeminiResponse(body).choices.map((c) => [c.index, c.text, c.stopReason])).toEqual([
      [0, 'A', 'stop'],
      [1, 'B', 'length'],
    ]);
    expect(fromGeminiResponse(body).usage).toBeNull();
  });
});

describe('Gemini finish reasons and usage', () => {
  test.each([
    ['STOP', false, 'stop'],
    ['STOP', true, 'tool_calls'],
    [undefined, true, 'tool_calls'],
    ['MAX_TOKENS', false, 'length'],
    ['MAX_TOKENS', true, 'length'],
    ['SAFETY', false, 'content_filter'],
    ['RECITATION', false, 'content_filter'],
    ['BLOCKLIST', false, 'content_filter'],
    ['PROHIBITED_CONTENT', false, 'content_filter'],
    ['SPII', false, 'content_filter'],
    ['OTHER', false, 'stop'],
    ['FINISH_REASON_UNSPECIFIED', false, 'stop'],
  ] as const)('%s (function calls: %s) → %s', (reason, calls, expected) => {
    expect(stopReasonFromGemini(reason, calls)).toBe(expected);
  });

  test('tool-use prompt tokens are input; missing optional counts are zero; bogus counts are not believed', () => {
    expect(believedUsage(usageFromGemini({ promptTokenCount: 100, toolUsePromptTokenCount: 40, candidatesTokenCount: 10 }))).toEqual({
      input: 140, cachedInput: 0, cacheWrite: 0, output: 10, reasoning: 0,
    });
    // A blocked prompt generates nothing: no candidatesTokenCount is 0, not a gap.
    expect(believedUsage(usageFromGemini({ promptTokenCount: 12 }))).toEqual({ input: 12, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 });
    const checked = checkReportedUsage(usageFromGemini({ promptTokenCount: -3, candidatesTokenCount: Number.NaN }), { input: 100, output: 100 }, { input: 9, output: 2 });
    expect(checked.usage).toEqual({ input: 9, cachedInput: 0, cacheWrite: 0, output: 2, reasoning: 0 });
    expect(checked.implausible?.reported).toMatchObject({ promptTokenCount: '-3', candidatesTokenCount: 'NaN' });
  });
});
