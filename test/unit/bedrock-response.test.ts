import { ProviderError } from '../../modules/canonical/provider-error.js';
import { attemptCost } from '../../modules/inference/pricing/attempt-cost.js';
import { bedrockHttpError, bedrockStreamException, classifyBedrockError } from '../../modules/providers/bedrock/bedrock-errors.js';
import { fromConverseResponse } from '../../modules/providers/bedrock/bedrock-response.js';
import { stopReasonFromConverse, usageFromConverse } from '../../modules/providers/bedrock/bedrock-usage.js';
import { fixtureJson } from '../support/provider-fixtures.js';
import { believedUsage, withBelievedUsage } from '../support/believed-usage.js';
import { checkReportedUsage } from '../../modules/canonical/index.js';

const golden = fixtureJson('bedrock', 'converse-tool-use.json');

/** Claude 3.5 Sonnet on Bedrock: $3 input, $15 output, $0.30 cache read, $3.75 cache write per 1M tokens. */
const SONNET = { inputPer1M: '3.00', outputPer1M: '15.00', cachedInputPer1M: '0.30', cacheWritePer1M: '3.75', reasoningPer1M: null, currency: 'USD' as const };

describe('Bedrock Converse responses', () => {
  test('the documentation tool-use answer maps to one choice with the tool call and cache-inclusive usage', () => {
    expect(withBelievedUsage(fromConverseResponse(golden.converseResponse, golden.expectedResponse.providerRequestId))).toEqual(golden.expectedResponse);
  });

  test('the follow-up text answer: end_turn → stop, usage without cache counters', () => {
    const response = fromConverseResponse(golden.followUpResponse, null);
    expect(response.choices).toEqual([
      { index: 0, text: 'The most popular song on WZPZ is Elemental Hotel by 8 Storey Hike.', toolCalls: [], stopReason: 'stop', reasoning: [], logprobs: null },
    ]);
    expect(believedUsage(response.usage)).toEqual({ input: 470, cachedInput: 0, cacheWrite: 0, output: 18, reasoning: 0 });
  });

  test('text and several tool uses in one message; reasoning blocks become reasoning parts', () => {
    const response = fromConverseResponse(
      {
        output: {
          message: {
            role: 'assistant',
            content: [
              { reasoningContent: { reasoningText: { text: 'thinking' } } },
              { text: 'Checking ' },
              { text: 'both.' },
              { toolUse: { toolUseId: 'a', name: 'f', input: { x: 1 } } },
              { toolUse: { toolUseId: 'b', name: 'g', input: {} } },
            ],
          },
        },
        stopReason: 'tool_use',
      },
      null,
    );
    expect(response.choices[0]).toEqual({
      index: 0,
      text: 'Checking both.',
      toolCalls: [
        { id: 'a', name: 'f', arguments: '{"x":1}' },
        { id: 'b', name: 'g', arguments: '{}' },
      ],
      stopReason: 'tool_calls',
      reasoning: [{ type: 'thinking', text: 'thinking', signature: null }],
      logprobs: null,
    });
    expect(response.usage).toBeNull();
  });

  test('a body that is not a Converse response is malformed', () => {
    for (const body of [null, {}, { output: {} }, { output: { message: { content: [{ toolUse: { name: 'f' } }] } } }]) {
      expect(() => fromConverseResponse(body, null)).toThrow(expect.objectContaining({ errorClass: 'malformed_response' }));
    }
  });

  test.each([
    ['end_turn', 'stop'], ['stop_sequence', 'stop'], ['max_tokens', 'length'], ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'], ['guardrail_intervened', 'content_filter'], ['content_filtered', 'content_filter'], [undefined, 'stop'],
  ])('stop reason %s → %s', (reason, expected) => {
    expect(stopReasonFromConverse(reason)).toBe(expected);
  });

  test('the matched stop sequence Claude names in additionalModelResponseFields is kept; anything else names none', () => {
    const response = (stopReason: string, additionalModelResponseFields?: unknown) =>
      fromConverseResponse({ output: { message: { role: 'assistant', content: [{ text: 'One, two, ' }] } }, stopReason, additionalModelResponseFields }, null).choices[0];
    expect(response('stop_sequence', { stop_sequence: 'three' })).toMatchObject({ stopReason: 'stop', stopSequence: 'three' });
    for (const choice of [response('stop_sequence'), response('stop_sequence', { stop_sequence: null }), response('stop_sequence', 'three'), response('end_turn', { stop_sequence: 'three' })]) {
      expect(choice).not.toHaveProperty('stopSequence');
    }
  });
});

describe('Bedrock usage and cost', () => {
  test('canonical input includes cache reads and writes; the cost prices each part once (hand-computed)', () => {
    const usage = believedUsage(usageFromConverse(golden.converseResponse.usage));
    expect(usage).toEqual({ input: 1375, cachedInput: 800, cacheWrite: 200, output: 67, reasoning: 0 });
    // 375 plain × $3 + 800 cached × $0.30 + 200 written × $3.75 + 67 output × $15, per million tokens
    expect(attemptCost(usage, SONNET)).toEqual({
      input: '0.001125000000',
      cachedInput: '0.000240000000',
      cacheWrite: '0.000750000000',
      output: '0.001005000000',
      total: '0.003120000000',
      currency: 'USD',
    });
  });

  test('without cache prices, cached and written tokens cost the input price (never billed twice)', () => {
    const usage = believedUsage(usageFromConverse({ inputTokens: 100, outputTokens: 10, totalTokens: 410, cacheReadInputTokens: 200, cacheWriteInputTokens: 100 }));
    const cost = attemptCost(usage, { ...SONNET, cachedInputPer1M: null, cacheWritePer1M: null });
    // 400 input tokens × $3 + 10 × $15 = 0.0012 + 0.00015
    expect(cost.total).toBe('0.001350000000');
  });

  test('missing cache counters count as zero; nonsense counters are not believed and are named', () => {
    expect(believedUsage(usageFromConverse({ inputTokens: 3, outputTokens: 4 }))).toEqual({ input: 3, cachedInput: 0, cacheWrite: 0, output: 4, reasoning: 0 });
    const checked = checkReportedUsage(usageFromConverse({ inputTokens: -3, outputTokens: Number.NaN }), { input: 100, output: 100 }, { input: 11, output: 5 });
    expect(checked.usage).toEqual({ input: 11, cachedInput: 0, cacheWrite: 0, output: 5, reasoning: 0 });
    expect(checked.implausible?.reported).toMatchObject({ inputTokens: '-3', outputTokens: 'NaN' });
  });
});

describe('Bedrock error classification', () => {
  const header = (type: string) => ({ 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` });

  test.each([
    [429, 'ThrottlingException', 'Too many requests, please wait before trying again.', 'rate_limited'],
    [503, 'ServiceUnavailableException', 'Service unavailable.', 'overloaded'],
    [403, 'AccessDeniedException', 'You do not have access to the model with the specified model ID.', 'auth'],
    [403, 'UnrecognizedClientException', 'The security token included in the request is invalid.', 'auth'],
    [400, 'ValidationException', 'Malformed input request: #: extraneous key [foo] is not permitted', 'invalid_request'],
    [400, 'ValidationException', 'Input is too long for requested model.', 'context_length'],
    [400, 'ValidationException', 'prompt is too long: 204,800 tokens > 200,000 maximum', 'context_length'],
    [408, 'ModelTimeoutException', 'Model has timed out in processing the request.', 'timeout'],
    [500, 'InternalServerException', 'Internal server error', 'transient'],
    [424, 'ModelErrorException', 'The model failed to process the request.', 'transient'],
    [400, 'ServiceQuotaExceededException', 'Your request exceeds the service quota for your account.', 'rate_limited'],
  ])('%i %s → its class', (status, type, message, errorClass) => {
    const error = bedrockHttpError(status, header(type), JSON.stringify({ message }));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.errorClass).toBe(errorClass);
    expect(error.httpStatus).toBe(status);
    expect(error.message).toBe(`provider returned ${status}`);
    expect(error.providerMessage).toContain(type);
    expect(error.providerMessage).not.toContain('internal.amazon.com');
  });

  test('without an error type the status decides: 429, 403, 408, 503, 502 and other 5xx', () => {
    expect(bedrockHttpError(429, {}, '').errorClass).toBe('rate_limited');
    expect(bedrockHttpError(403, {}, '{"message":"Missing Authentication Token"}').errorClass).toBe('auth');
    expect(bedrockHttpError(408, {}, '').errorClass).toBe('timeout');
    expect(bedrockHttpError(503, {}, '').errorClass).toBe('overloaded');
    expect(bedrockHttpError(502, {}, '<html>bad gateway</html>').errorClass).toBe('transient');
    expect(bedrockHttpError(502, {}, '<html>bad gateway</html>').message).toBe('provider returned 502');
  });

  test('the provider request id comes from x-amzn-requestid', () => {
    expect(bedrockHttpError(400, { ...header('ValidationException'), 'x-amzn-requestid': 'b6c1e5a2-1111-4c1b-9a2e-0f6d9e3c7a10' }, '{}').providerRequestId).toBe(
      'b6c1e5a2-1111-4c1b-9a2e-0f6d9e3c7a10',
    );
  });

  test('the `__type` of the body names the error when the header is missing; retry-after is honoured', () => {
    const error = bedrockHttpError(400, { 'retry-after': '3' }, JSON.stringify({ __type: 'com.amazon.coral.service#ThrottlingException', message: 'slow down' }));
    expect(error.errorClass).toBe('rate_limited');
    expect(error.retryAfterMs).toBe(3000);
  });

  test('messages are sanitised: keys and URLs never reach the client', () => {
    const error = bedrockHttpError(400, header('ValidationException'), JSON.stringify({ message: 'bad key AKIAABCDEFGHIJKLMNOP at https://bedrock-runtime.us-east-1.amazonaws.com/x' }));
    for (const text of [error.message, error.providerMessage]) {
      expect(text).not.toContain('AKIAABCDEFGHIJKLMNOP');
      expect(text).not.toContain('amazonaws.com');
    }
    expect(error.providerMessage).toContain('bad key');
  });

  test('in-stream exception types classify like their HTTP counterparts', () => {
    expect(classifyBedrockError('throttlingException', null, '')).toBe('rate_limited');
    expect(classifyBedrockError('modelStreamErrorException', null, '')).toBe('transient');
    expect(classifyBedrockError('serviceUnavailableException', null, '')).toBe('overloaded');
    expect(classifyBedrockError('validationException', null, 'Input is too long for requested model.')).toBe('context_length');
    expect(classifyBedrockError('somethingNewException', null, '')).toBe('transient');
    expect(bedrockStreamException('throttlingException', '{"message":"Rate exceeded"}').providerMessage).toBe('throttlingException: Rate exceeded');
  });
});
