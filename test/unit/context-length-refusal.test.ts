import { ContextLengthExceeded, GatewayError, ProviderError } from '../../modules/canonical/index.js';
import { anthropicErrorBody } from '../../modules/inference/formats/anthropic/anthropic-error-envelope.js';
import { openAiErrorBody } from '../../modules/inference/formats/openai/openai-error-envelope.js';
import { responsesErrorBody } from '../../modules/inference/formats/responses/responses-error-envelope.js';
import { noRouteError, providerRefusal } from '../../modules/inference/pipeline/client-errors.js';
import { withCacheStatus } from '../../modules/inference/pipeline/exact-cache-lookup.js';
import { contextLengthFromProvider } from '../../modules/inference/pipeline/provider-context-length.js';
import type { RoutePlan, SkippedRoute } from '../../modules/inference/routing/route-planner.js';
import { testAlias, testDeployment } from '../support/routing-fixtures.js';

const alias = testAlias([
  testDeployment('small', { contextWindow: 4_000, maxOutputTokens: 2_000 }),
  testDeployment('large', { contextWindow: 8_000, maxOutputTokens: 1_000 }),
  testDeployment('vision-only', { contextWindow: 1_000_000 }),
]);
const tooSmall = (route: string): SkippedRoute => ({ deploymentId: route, route, stage: 'capabilities', reason: 'context_window_too_small', detail: [], until: null });
const plan = (skipped: SkippedRoute[]): RoutePlan => ({ candidates: [], skipped, reason: '', emptiedBy: 'capabilities' });
const bodyMessage = (body: unknown) => (body as { error: { message: string } }).error.message;

describe('context-length refusals carry their numbers, in each client format\'s words', () => {
  test('without the demand (callers that do not pass it) the refusal stays the plain 400 context_length_exceeded', () => {
    const error = noRouteError(alias, plan([tooSmall('chat#1'), tooSmall('chat#2')]));
    expect(error).not.toBeInstanceOf(ContextLengthExceeded);
    expect(error).toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'messages' });
  });

  test('the largest window among the routes it did not fit, the output capped at that route\'s limit; a route skipped for another reason is not on offer', () => {
    const error = noRouteError(alias, plan([tooSmall('chat#1'), tooSmall('chat#2')]), (p) => p, () => null, { inputTokens: 7_500, outputTokensPerChoice: 4_096 });
    expect(error).toBeInstanceOf(ContextLengthExceeded);
    expect(error).toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'messages' });
    expect((error as ContextLengthExceeded).numbers).toEqual({ inputTokens: 7_500, outputTokens: 1_000, contextWindow: 8_000, route: 'chat#2', estimated: true });
    expect(error.detail).toEqual({ input_tokens: 7_500, output_tokens: 1_000, context_window: 8_000, route: 'chat#2' });
    expect(error.message).toBe('The request does not fit: 7500 input tokens (estimated) and 1000 output tokens exceed the largest context window on offer, 8000 tokens on route chat#2.');
  });

  test('embeddings (no output) name `input` and only the prompt', () => {
    const error = noRouteError(alias, plan([tooSmall('chat#1')]), (p) => p, () => null, { inputTokens: 5_000, outputTokensPerChoice: 0 }) as ContextLengthExceeded;
    expect(error.numbers).toMatchObject({ inputTokens: 5_000, outputTokens: null, contextWindow: 4_000, route: 'chat#1' });
    expect(error.param).toBe('input');
    expect(bodyMessage(openAiErrorBody(error))).toMatch(/^This model's maximum context length is 4000 tokens\. However, your messages resulted in 5000 tokens\./);
  });

  const gatewayRefusal = new ContextLengthExceeded({ inputTokens: 7_500, outputTokens: 1_000, contextWindow: 8_000, route: 'chat#2', estimated: true });

  test('OpenAI Chat Completions: OpenAI\'s own sentence, code context_length_exceeded, param messages, the numbers as fields', () => {
    expect(openAiErrorBody(gatewayRefusal)).toEqual({
      error: {
        message: 'This model\'s maximum context length is 8000 tokens. However, you requested 8500 tokens (7500 in the messages, 1000 in the completion). '
          + 'Please reduce the length of the messages or completion. (the largest context window on offer is route chat#2\'s; the input count is the gateway\'s estimate)',
        type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded',
        input_tokens: 7_500, output_tokens: 1_000, context_window: 8_000, route: 'chat#2',
      },
    });
  });

  test('Anthropic: always "prompt is too long: N tokens > M maximum"; with the output counted, N is the total and the split follows', () => {
    expect(anthropicErrorBody(gatewayRefusal)).toEqual({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'prompt is too long: 8500 tokens > 8000 maximum'
          + ' (7500 input tokens + 1000 max_tokens; the largest context window on offer is route chat#2\'s; the input count is the gateway\'s estimate)',
      },
    });
    const promptAlone = new ContextLengthExceeded({ inputTokens: 9_000, outputTokens: 1_000, contextWindow: 8_000, route: 'chat#2', estimated: true });
    expect((anthropicErrorBody(promptAlone).error.message)).toMatch(/^prompt is too long: 9000 tokens > 8000 maximum \(/);
  });

  test('Responses: its own sentence, param input, then the numbers', () => {
    expect(responsesErrorBody(gatewayRefusal)).toMatchObject({
      error: {
        message: 'Your input exceeds the context window of this model. Please adjust your input and try again. '
          + '(7500 input tokens + 1000 output tokens > 8000 maximum; the largest context window on offer is route chat#2\'s; the input count is the gateway\'s estimate)',
        type: 'invalid_request_error', param: 'input', code: 'context_length_exceeded', context_window: 8_000,
      },
    });
    const other = new GatewayError(400, 'invalid_request', 'bad', 'temperature');
    expect(responsesErrorBody(other)).toEqual(openAiErrorBody(other));
  });

  test('the exact cache\'s status header keeps the kind (and so the client\'s wording)', () => {
    const withHeader = withCacheStatus(gatewayRefusal, 'miss');
    expect(withHeader).toBeInstanceOf(ContextLengthExceeded);
    expect(withHeader.headers).toEqual({ 'x-switchyard-cache': 'miss' });
    expect(bodyMessage(openAiErrorBody(withHeader))).toMatch(/^This model's maximum context length is 8000 tokens/);
  });
});

describe("a provider's own context-length refusal", () => {
  test('text without numbers, or none at all, gives no numbers', () => {
    expect(contextLengthFromProvider(null)).toBeNull();
    expect(contextLengthFromProvider('Input is too long for requested model.')).toBeNull();
    expect(contextLengthFromProvider('prompt is too long')).toBeNull();
  });

  test.each([
    ['This model\'s maximum context length is 128000 tokens. However, you requested 130000 tokens (129000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.', 129_000, 1_000, 128_000],
    ['This model\'s maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.', 9_000, null, 8_192],
    ['prompt is too long: 208310 tokens > 200000 maximum', 208_310, null, 200_000],
    ['input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again', 199_759, 8_192, 200_000],
    ['The input token count (1243839) exceeds the maximum number of tokens allowed (1048576).', 1_243_839, null, 1_048_576],
    ['The input token [redacted] (1243839) exceeds the maximum number of tokens allowed (1048576).', 1_243_839, null, 1_048_576],
  ])('%s', (message, inputTokens, outputTokens, contextWindow) => {
    expect(contextLengthFromProvider(message)).toEqual({ inputTokens, outputTokens, contextWindow, route: null, estimated: false });
  });

  test('is said again in the client\'s words with the provider\'s status and request id; without numbers it keeps the provider\'s text', () => {
    const refusal = providerRefusal(new ProviderError('context_length', 'provider returned 400', 400, null, {
      providerMessage: 'prompt is too long: 208310 tokens > 200000 maximum', providerRequestId: 'req_011CPvq8fzS8A8JHdkk6Y4Zz',
    }));
    expect(refusal).toBeInstanceOf(ContextLengthExceeded);
    expect(refusal).toMatchObject({ status: 400, code: 'context_length_exceeded', detail: { provider_request_id: 'req_011CPvq8fzS8A8JHdkk6Y4Zz', route: null } });
    expect(bodyMessage(openAiErrorBody(refusal))).toBe(
      'This model\'s maximum context length is 200000 tokens. However, your messages resulted in 208310 tokens. Please reduce the length of the messages. (provider request id: req_011CPvq8fzS8A8JHdkk6Y4Zz)',
    );
    expect(anthropicErrorBody(refusal).error.message).toBe('prompt is too long: 208310 tokens > 200000 maximum (provider request id: req_011CPvq8fzS8A8JHdkk6Y4Zz)');
    const plain = providerRefusal(new ProviderError('context_length', 'provider returned 413', 413, null, { providerMessage: 'Request too large' }));
    expect(plain).not.toBeInstanceOf(ContextLengthExceeded);
    expect(plain).toMatchObject({ status: 413, code: 'context_length_exceeded' });
    expect(plain.message).toContain('Request too large');
  });
});
