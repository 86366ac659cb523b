import type { ChatResponse } from '../../modules/canonical/chat-response.js';
import type { EmbeddingsRequest, EmbeddingsResponse } from '../../modules/canonical/embeddings.js';
import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import type { AttemptTurn } from '../../modules/inference/pipeline/attempt-loop.js';
import { type BufferedResult, bufferedAttempt, bufferedChatAttempt } from '../../modules/inference/pipeline/buffered-attempt.js';
import { embeddingsAttempt } from '../../modules/inference/pipeline/embeddings-attempt.js';
import { GatewayFault } from '../../modules/inference/pipeline/gateway-fault.js';
import type { PipelineSettings } from '../../modules/inference/pipeline/inference-services.js';
import { BACKSTOP_SLACK_MS } from '../../modules/inference/resilience/deadlines.js';
import { DEFAULT_RESILIENCE } from '../../modules/inference/resilience/resilience-settings.js';
import type { ProviderAdapter, UpstreamCall } from '../../modules/providers/provider-adapter.js';
import { FakeResponse, testRoutedRequest } from '../support/pipeline-fakes.js';
import { chatRequest } from '../support/provider-fixtures.js';
import { testAlias, testDeployment } from '../support/routing-fixtures.js';
import type { TokenUsage } from '../../events/index.js';
import { type ReportedUsage, reportedField, reportedUsageOf } from '../../modules/canonical/index.js';

const ESTIMATED_INPUT = 120;
const MAX_ANSWER_BYTES = 1024 * 1024;
const settings: PipelineSettings = { durability: 'default', nodeId: 'node-1', resilience: DEFAULT_RESILIENCE };
const request = chatRequest();
const embeddings: EmbeddingsRequest = { model: 'embed', inputs: ['one', 'two'], dimensions: null, user: null };

const answer = (usage: TokenUsage | ReportedUsage | null): ChatResponse => ({
  providerRequestId: 'prov-1',
  choices: [{ index: 0, text: 'x'.repeat(40), toolCalls: [], stopReason: 'stop', reasoning: [], logprobs: null }],
  usage: usage === null ? null : Array.isArray((usage as ReportedUsage).input) ? (usage as ReportedUsage) : reportedUsageOf(usage as TokenUsage),
});
const inputCount = (value: unknown) => [reportedField('usage.prompt_tokens', value, true)];

type Operation = 'chat' | 'embed';

/**
 * One buffered attempt (`operation`) of a request admitted on a one-route alias, over a provider whose
 * call is `provider`: the attempt's report or what it threw, the AttemptFinished it recorded (if any),
 * the provider calls made and the latencies the tracker was taught.
 */
async function run<Response>(operation: Operation, provider: (call: UpstreamCall) => Promise<unknown>, raw = new FakeResponse()) {
  const alias = testAlias([testDeployment('primary')]);
  const admitted = await testRoutedRequest(alias, { raw });
  const calls: UpstreamCall[] = [];
  const latencies: Array<[string, number]> = [];
  const services = {
    pools: { target: async () => ({ dispatcher: {}, baseUrl: new URL('http://upstream.invalid') }) },
    latency: { observe: (deploymentId: string, ms: number) => latencies.push([deploymentId, ms]) },
  } as unknown as Parameters<typeof bufferedAttempt>[0];
  const adapter = {
    [operation]: (call: UpstreamCall) => {
      calls.push(call);
      return provider(call);
    },
  } as unknown as ProviderAdapter;
  const signal = admitted.lifetime.signal;
  const attempt = bufferedAttempt(services, settings, admitted, (a, transport, deployment) =>
    (operation === 'chat'
      ? bufferedChatAttempt(a, request, ESTIMATED_INPUT, deployment, MAX_ANSWER_BYTES, signal, transport)
      : embeddingsAttempt(a, embeddings, ESTIMATED_INPUT, deployment, MAX_ANSWER_BYTES, signal, transport)) as Promise<BufferedResult<Response>>,
  );
  const turn: AttemptTurn = { candidate: admitted.plan.candidates[0], attempt: 1, why: 'attempt 1: first choice primary', trial: false };
  const settled = await attempt(turn, adapter, { traceparent: '00-abc-def-01' }).then(
    (report) => ({ report, thrown: null }),
    (thrown: unknown) => ({ report: null, thrown }),
  );
  admitted.release();
  return { ...settled, recorded: { count: admitted.journal.attemptCount, last: admitted.journal.lastAttempt }, calls, latencies, admitted };
}

const chat = (provider: (call: UpstreamCall) => Promise<ChatResponse>, raw?: FakeResponse) => run<ChatResponse>('chat', provider, raw);

describe('a buffered chat attempt', () => {
  test("success with the provider's usage: one AttemptFinished billed on the provider's word, the latency learned", async () => {
    const usage = { input: 11, cachedInput: 2, cacheWrite: 0, output: 7, reasoning: 0 };
    const { report, recorded, latencies } = await chat(async () => answer(usage));
    expect(report).toMatchObject({ outcome: 'success', error: null, answer: { usage, response: { providerRequestId: 'prov-1' } } });
    expect(recorded.count).toBe(1);
    expect(recorded.last).toMatchObject({
      attempt: 1, outcome: 'success', errorClass: null, httpStatus: 200, usage, usageEvidence: 'provider', deploymentId: 'primary', providerRequestId: 'prov-1', ttftMs: null,
    });
    expect(Number(recorded.last!.cost.total)).toBeGreaterThan(0);
    expect(latencies.map(([id]) => id)).toEqual(['primary']);
  });

  test("without the provider's usage the output is counted from the answer and the input is the admission estimate", async () => {
    const { report, recorded } = await chat(async () => answer(null));
    const counted = { input: ESTIMATED_INPUT, cachedInput: 0, cacheWrite: 0, output: 10, reasoning: 0 };
    expect(report!.answer?.usage).toEqual(counted);
    expect(recorded.last).toMatchObject({ outcome: 'success', usage: counted, usageEvidence: 'counted' });
  });

  test("the call follows the request's signal, with undici's timeouts past the request deadline and the attempt's trace headers", async () => {
    const { calls, admitted } = await chat(async () => answer(null));
    expect(calls).toHaveLength(1);
    expect(calls[0].signal).toBe(admitted.lifetime.signal);
    expect(calls[0].deployment.id).toBe('primary');
    expect(calls[0].headersTimeoutMs).toBeGreaterThan(BACKSTOP_SLACK_MS);
    expect(calls[0].headersTimeoutMs).toBeLessThanOrEqual(60_000 + BACKSTOP_SLACK_MS);
    expect(calls[0].idleTimeoutMs).toBe(DEFAULT_RESILIENCE.deadlines.idleTimeoutMs + BACKSTOP_SLACK_MS);
    expect(calls[0].traceHeaders).toEqual({ traceparent: '00-abc-def-01' });
  });

  test.each([
    ['a provider 503, which another attempt may get past', new ProviderError('transient', 'provider returned 503', 503), true],
    ["a provider 400, the request's own fault, which no attempt would get past", new ProviderError('invalid_request', 'provider returned 400', 400), false],
  ])('%s: reported and recorded as failed, nothing billed, no latency learned', async (_name, error, fallbackable) => {
    const { report, recorded, latencies } = await chat(async () => {
      throw error;
    });
    expect(report).toEqual({ answer: null, outcome: 'failed', error });
    expect(report!.error!.fallbackable).toBe(fallbackable);
    expect(recorded.count).toBe(1);
    expect(recorded.last).toMatchObject({
      outcome: 'failed', errorClass: error.errorClass, httpStatus: error.httpStatus, usage: { input: 0, output: 0 }, usageEvidence: 'provider', providerRequestId: null,
    });
    expect(Number(recorded.last!.cost.total)).toBe(0);
    expect(latencies).toEqual([]);
  });

  test.each([
    ["a GatewayError raised about the request (the caller's 4xx)", new GatewayError(400, 'invalid_request', 'tool schema cannot be translated'), 400],
    ['an unexpected exception of ours (a 500)', new RangeError('Maximum call stack size exceeded'), 500],
  ])("the gateway's own failure, %s, is thrown as a GatewayFault and not recorded as the provider's", async (_name, thrown, status) => {
    const { report, thrown: fault, recorded, latencies } = await chat(async () => {
      throw thrown;
    });
    expect(report).toBeNull();
    expect(fault).toBeInstanceOf(GatewayFault);
    expect((fault as GatewayFault).error.status).toBe(status);
    expect(recorded.count).toBe(0);
    expect(latencies).toEqual([]);
  });

  test('a client that goes away mid-call: the call is aborted and the attempt is cancelled, whatever the adapter threw', async () => {
    const raw = new FakeResponse();
    const { report, recorded } = await chat(
      (call) =>
        new Promise((_, reject) => {
          call.signal.addEventListener('abort', () => reject(new Error('This operation was aborted')), { once: true });
          setImmediate(() => raw.hangUp());
        }),
      raw,
    );
    expect(report).toMatchObject({ answer: null, outcome: 'cancelled', error: { errorClass: 'cancelled' } });
    expect(recorded.last).toMatchObject({ outcome: 'cancelled', errorClass: 'cancelled', usage: { input: 0, output: 0 } });
  });
});

describe('an embeddings attempt', () => {
  const embed = (provider: (call: UpstreamCall) => Promise<EmbeddingsResponse>) => run<EmbeddingsResponse>('embed', provider);
  const vectors = (n: number, length = 3) => Array.from({ length: n }, () => Array.from({ length }, () => 0.5));

  test("the provider's input count is billed on its word (input only); without it, the admission estimate, labelled estimated", async () => {
    const counted = await embed(async () => ({ providerRequestId: 'emb-1', vectors: vectors(2), inputTokens: inputCount(9) }));
    expect(counted.report).toMatchObject({ outcome: 'success', answer: { usage: { input: 9, output: 0 }, response: { vectors: vectors(2) } } });
    expect(counted.recorded.last).toMatchObject({ outcome: 'success', usage: { input: 9, output: 0, cachedInput: 0 }, usageEvidence: 'provider', providerRequestId: 'emb-1' });
    expect(counted.latencies).toHaveLength(1);
    const estimated = await embed(async () => ({ providerRequestId: null, vectors: vectors(2), inputTokens: null }));
    expect(estimated.recorded.last).toMatchObject({ outcome: 'success', usage: { input: ESTIMATED_INPUT, output: 0 }, usageEvidence: 'estimated' });
  });

  test.each([
    ['a vector missing', { providerRequestId: null, vectors: vectors(1), inputTokens: inputCount(3) }],
    ['an empty vector', { providerRequestId: null, vectors: [[0.5], []], inputTokens: inputCount(3) }],
  ])("an answer the client could not use (%s) is the provider's failure: malformed_response, recorded failed, nothing billed", async (_name, response) => {
    const { report, recorded, latencies } = await embed(async () => response);
    expect(report).toMatchObject({ answer: null, outcome: 'failed', error: { errorClass: 'malformed_response' } });
    expect(report!.error!.fallbackable).toBe(true);
    expect(recorded.last).toMatchObject({ outcome: 'failed', errorClass: 'malformed_response', usage: { input: 0 } });
    expect(latencies).toEqual([]);
  });

  test('a provider error is reported as is; a GatewayError of ours is thrown as a GatewayFault with nothing recorded', async () => {
    const error = new ProviderError('rate_limited', 'provider returned 429', 429, 1_000);
    expect((await embed(async () => Promise.reject(error))).report).toEqual({ answer: null, outcome: 'failed', error });
    const ours = await embed(async () => Promise.reject(new GatewayError(400, 'invalid_request', 'too many inputs for this provider')));
    expect(ours.thrown).toBeInstanceOf(GatewayFault);
    expect(ours.recorded.count).toBe(0);
  });
});
