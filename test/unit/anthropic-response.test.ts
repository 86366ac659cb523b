import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PriceTable } from '../../events/price-events.js';
import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { anthropicErrorBody } from '../../modules/inference/formats/anthropic/anthropic-error-envelope.js';
import { toAnthropicMessage } from '../../modules/inference/formats/anthropic/anthropic-messages-response.js';
import { attemptCost } from '../../modules/inference/pricing/attempt-cost.js';
import { anthropicHttpError, classifyAnthropicError } from '../../modules/providers/anthropic/anthropic-errors.js';
import { fromAnthropicMessage } from '../../modules/providers/anthropic/anthropic-response.js';
import { stopReasonFromAnthropic, stopReasonToAnthropic, usageFromAnthropic, usageToAnthropic } from '../../modules/providers/anthropic/anthropic-usage.js';
import { believedUsage, withBelievedUsage } from '../support/believed-usage.js';
import { checkReportedUsage } from '../../modules/canonical/index.js';

const fixture = (name: string) => JSON.parse(readFileSync(join(process.cwd(), 'test/fixtures/anthropic', name), 'utf8'));
const identity = { id: 'msg_abc', created: 0, model: 'claude-alias' };

describe('Anthropic buffered responses (documentation fixtures)', () => {
  test('the API reference message → canonical text, stop and usage', () => {
    expect(withBelievedUsage(fromAnthropicMessage(fixture('message.json')))).toEqual({
      providerRequestId: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
      choices: [{ index: 0, text: 'Hi! My name is Claude.', toolCalls: [], stopReason: 'stop', reasoning: [], logprobs: null }],
      usage: { input: 2095, cachedInput: 0, cacheWrite: 0, output: 503, reasoning: 0 },
    });
  });

  test('the tool-use guide message → text plus a tool call with its input as JSON text', () => {
    const response = fromAnthropicMessage(fixture('message-tool-use.json'));
    expect(response.choices[0].text).toMatch(/^<thinking>I need to use get_weather/);
    expect(response.choices[0].stopReason).toBe('tool_calls');
    expect(response.choices[0].toolCalls).toHaveLength(1);
    const call = response.choices[0].toolCalls[0];
    expect(call).toMatchObject({ id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather' });
    expect(JSON.parse(call.arguments)).toEqual({ location: 'San Francisco, CA', unit: 'celsius' });
    expect(response.usage).toBeNull(); // the docs example omits usage; the gateway then counts
  });

  test('a body that is not a message is malformed', () => {
    expect(() => fromAnthropicMessage({ type: 'error', error: { type: 'api_error', message: 'x' } })).toThrow(expect.objectContaining({ errorClass: 'malformed_response' }));
    expect(() => fromAnthropicMessage('nope')).toThrow(expect.objectContaining({ errorClass: 'malformed_response' }));
  });

  test('canonical → Anthropic message: text and tool_use blocks, stop reason, usage split back out of input', () => {
    const message = toAnthropicMessage(
      {
        providerRequestId: 'x',
        choices: [{ index: 0, text: 'Let me look.', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }], stopReason: 'tool_calls', reasoning: [], logprobs: null }],
        usage: null,
      },
      identity,
      { input: 1000, cachedInput: 700, cacheWrite: 200, output: 42, reasoning: 0 },
    );
    expect(message).toEqual({
      id: 'msg_abc', type: 'message', role: 'assistant', model: 'claude-alias',
      content: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }],
      stop_reason: 'tool_use', stop_sequence: null,
      usage: { input_tokens: 100, cache_read_input_tokens: 700, cache_creation_input_tokens: 200, output_tokens: 42 },
    });
  });

  test.each([
    ['cut-off JSON', '{"city": "Par'],
    ['text that is not JSON', 'get the weather for Paris'],
    ['a JSON array', '[1,2]'],
    ['a JSON string', '"Paris"'],
    ['a JSON number', '42'],
    ['JSON null', 'null'],
  ])('tool arguments another provider produced that are not a JSON object (%s) arrive wrapped as {"_raw": …}, never as a string', (_name, text) => {
    const message = toAnthropicMessage(
      { providerRequestId: null, choices: [{ index: 0, text: '', toolCalls: [{ id: 'c', name: 'f', arguments: text }], stopReason: 'tool_calls', reasoning: [], logprobs: null }], usage: null },
      identity,
      { input: 1, cachedInput: 0, cacheWrite: 0, output: 1, reasoning: 0 },
    );
    expect(message.content).toEqual([{ type: 'tool_use', id: 'c', name: 'f', input: { _raw: text } }]);
  });

  test('a JSON object passes as it is, and no arguments are {}', () => {
    const answer = (args: string) => toAnthropicMessage(
      { providerRequestId: null, choices: [{ index: 0, text: '', toolCalls: [{ id: 'c', name: 'f', arguments: args }], stopReason: 'tool_calls', reasoning: [], logprobs: null }], usage: null },
      identity,
      { input: 1, cachedInput: 0, cacheWrite: 0, output: 1, reasoning: 0 },
    ).content[0];
    expect(answer('{"city":"Paris","days":[1,2]}')).toMatchObject({ input: { city: 'Paris', days: [1, 2] } });
    expect(answer('  ')).toMatchObject({ input: {} });
  });
});

describe('stop reasons', () => {
  test.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    [null, 'stop'],
  ])('Anthropic %s → canonical %s', (anthropic, canonical) => {
    expect(stopReasonFromAnthropic(anthropic)).toBe(canonical);
  });

  test.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['content_filter', 'refusal'],
  ] as const)('canonical %s → Anthropic %s', (canonical, anthropic) => {
    expect(stopReasonToAnthropic(canonical)).toBe(anthropic);
  });

  test('which stop sequence matched is kept: Anthropic message → canonical → Anthropic message', () => {
    const upstream = { id: 'msg_1', type: 'message', role: 'assistant', model: 'c', content: [{ type: 'text', text: 'One, two, ' }], usage: { input_tokens: 5, output_tokens: 3 } };
    const stopped = fromAnthropicMessage({ ...upstream, stop_reason: 'stop_sequence', stop_sequence: 'three' });
    expect(stopped.choices[0]).toMatchObject({ stopReason: 'stop', stopSequence: 'three' });
    const usage = { input: 5, cachedInput: 0, cacheWrite: 0, output: 3, reasoning: 0 };
    expect(toAnthropicMessage(stopped, identity, usage)).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'three' });
    // end_turn, or a stop_sequence field beside another stop reason, names no sequence
    for (const other of [{ stop_reason: 'end_turn', stop_sequence: null }, { stop_reason: 'max_tokens', stop_sequence: 'three' }]) {
      const choice = fromAnthropicMessage({ ...upstream, ...other }).choices[0];
      expect(choice).not.toHaveProperty('stopSequence');
      expect(toAnthropicMessage({ providerRequestId: null, choices: [choice], usage: null }, identity, usage)).toMatchObject({ stop_sequence: null });
    }
    expect(stopReasonToAnthropic('stop', 'three')).toBe('stop_sequence');
  });
});

describe('usage and cost with prompt caching', () => {
  // Sonnet-style prices: $3 input, $15 output, cache reads at a tenth, cache writes at 1.25×.
  const price: PriceTable = { inputPer1M: '3.00', outputPer1M: '15.00', cachedInputPer1M: '0.30', cacheWritePer1M: '3.75', reasoningPer1M: null, currency: 'USD' };

  test('canonical input includes cache reads and writes; each part is billed once at its own price', () => {
    const usage = believedUsage(usageFromAnthropic({ input_tokens: 21, cache_creation_input_tokens: 188086, cache_read_input_tokens: 1000, output_tokens: 393 }));
    expect(usage).toEqual({ input: 21 + 188086 + 1000, cachedInput: 1000, cacheWrite: 188086, output: 393, reasoning: 0 });
    const cost = attemptCost(usage, price);
    // By hand: 21 × 3.00 = 63; 1000 × 0.30 = 300; 188086 × 3.75 = 705322.5; 393 × 15.00 = 5895 (all per million).
    expect(cost).toEqual({
      input: '0.000063000000',
      cachedInput: '0.000300000000',
      cacheWrite: '0.705322500000',
      output: '0.005895000000',
      total: '0.711580500000',
      currency: 'USD',
    });
  });

  test('usage without cache fields counts them as zero; nonsense values are not believed and are named', () => {
    expect(believedUsage(usageFromAnthropic({ input_tokens: 10, output_tokens: 5 }))).toEqual({ input: 10, cachedInput: 0, cacheWrite: 0, output: 5, reasoning: 0 });
    const checked = checkReportedUsage(usageFromAnthropic({ input_tokens: -3, output_tokens: null, cache_read_input_tokens: Number.NaN }), { input: 1000, output: 1000 }, { input: 40, output: 7 });
    // input_tokens is not a count: the gateway's input (40) is billed; output_tokens is missing: its own count (7).
    expect(checked.usage).toEqual({ input: 40, cachedInput: 0, cacheWrite: 0, output: 7, reasoning: 0 });
    expect(checked.implausible).toEqual({
      reason: 'input_tokens is not a non-negative integer',
      reported: { input_tokens: '-3', cache_read_input_tokens: 'NaN', cache_creation_input_tokens: 'absent', output_tokens: 'null' },
    });
  });

  test('usageToAnthropic is the inverse of usageFromAnthropic', () => {
    const wire = { input_tokens: 7, cache_creation_input_tokens: 11, cache_read_input_tokens: 13, output_tokens: 17 };
    expect(usageToAnthropic(believedUsage(usageFromAnthropic(wire)))).toEqual(wire);
  });
});

describe('error classification', () => {
  test.each([
    [429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', 'rate_limited'],
    [529, 'overloaded_error', 'Overloaded', 'overloaded'],
    [529, null, null, 'overloaded'],
    [503, null, null, 'overloaded'],
    [401, 'authentication_error', 'invalid x-api-key', 'auth'],
    [403, 'permission_error', 'Your API key does not have permission', 'auth'],
    [400, 'invalid_request_error', 'messages: roles must alternate', 'invalid_request'],
    [400, 'invalid_request_error', 'prompt is too long: 208310 tokens > 200000 maximum', 'context_length'],
    [413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.', 'context_length'],
    [404, 'not_found_error', 'model: claude-9', 'invalid_request'],
    [500, 'api_error', 'Internal server error', 'transient'],
    [504, 'timeout_error', 'Request timed out', 'timeout'],
    [502, null, null, 'transient'],
  ])('%d %s → %s', (status, type, message, errorClass) => {
    expect(classifyAnthropicError(status, type, message)).toBe(errorClass);
  });

  test('an HTTP error keeps the status and retry-after, with a sanitised message and no raw body', () => {
    const body = JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down, key sk-ant-api03-abcdefghijklmnopqrstuvwxyz at https://internal.example/x' } });
    const error = anthropicHttpError(429, { 'retry-after': '7' }, body);
    expect(error).toMatchObject({ errorClass: 'rate_limited', httpStatus: 429, retryAfterMs: 7000 });
    expect(error.fallbackable).toBe(true);
    expect(error.message).not.toContain('sk-ant-api03');
    expect(error.message).not.toContain('internal.example');
    expect(anthropicHttpError(502, {}, '<html>bad gateway</html>').message).toBe('provider returned 502');
  });

  test.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [402, 'billing_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [413, 'request_too_large'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [502, 'api_error'],
    [503, 'overloaded_error'],
    [529, 'overloaded_error'],
    [504, 'timeout_error'],
  ])('gateway error %d → Anthropic envelope type %s', (status, type) => {
    expect(anthropicErrorBody(new GatewayError(status, 'code', 'What went wrong and how to fix it.'))).toEqual({
      type: 'error',
      error: { type, message: 'What went wrong and how to fix it.' },
    });
  });
});
