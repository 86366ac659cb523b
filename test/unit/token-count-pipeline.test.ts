import { estimateInputTokens } from '../../modules/canonical/index.js';
import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { anthropicTokenCount } from '../../modules/inference/formats/anthropic/anthropic-count-tokens-request.js';
import type { InferenceServices, PipelineSettings } from '../../modules/inference/pipeline/inference-services.js';
import { TOKEN_COUNT_HEADER, TokenCountPipeline } from '../../modules/inference/pipeline/token-count-pipeline.js';
import { DeploymentGate, type GateLease } from '../../modules/inference/resilience/deployment-gate.js';
import { DeploymentHealth } from '../../modules/inference/resilience/deployment-health.js';
import { DEFAULT_RESILIENCE } from '../../modules/inference/resilience/resilience-settings.js';
import { DeploymentConcurrency } from '../../modules/limits/deployment-concurrency.js';
import type { UpstreamCall } from '../../modules/providers/provider-adapter.js';
import { FakeResponse, testPrincipal } from '../support/pipeline-fakes.js';
import { testAlias, testCandidates, testDeployment } from '../support/routing-fixtures.js';

const BODY = { model: 'chat', messages: [{ role: 'user', content: 'How many tokens is this prompt, exactly?' }] };
const ESTIMATE = estimateInputTokens(anthropicTokenCount.parse(BODY));
const PROVIDER_COUNT = 4_242;

/**
 * A token-count pipeline over a real deployment gate (breaker, concurrency slot, throttle) and one
 * single-route alias whose provider counts through `count`. The planner is a fake that always offers the
 * route, so what is checked here is the gate's own say at call time.
 */
function setup(count: (call: UpstreamCall) => Promise<number>, options: { breaker?: object; ttftTimeoutMs?: number } = {}) {
  const health = new DeploymentHealth({ ...DEFAULT_RESILIENCE.breaker, ...options.breaker });
  const load = new DeploymentConcurrency();
  const gate = new DeploymentGate(health, load);
  const deployment = testDeployment('counter', { limits: { rpm: null, tpm: null, maxConcurrency: 1 } });
  const alias = testAlias([deployment]);
  const calls: UpstreamCall[] = [];
  const adapter = {
    countTokens: (call: UpstreamCall) => {
      calls.push(call);
      return count(call);
    },
  };
  const services = {
    auth: { authenticate: () => testPrincipal() },
    routing: { current: { aliases: new Map([[alias.name, alias]]), contentPolicyFor: () => null } },
    planner: { plan: () => ({ candidates: testCandidates(alias), skipped: [], reason: 'priority', emptiedBy: null }) },
    adapters: { for: () => adapter },
    pools: { target: async () => ({ dispatcher: {}, baseUrl: new URL('http://upstream.invalid') }) },
    gate,
  } as unknown as InferenceServices;
  const settings: PipelineSettings = {
    durability: 'default',
    nodeId: 'node-1',
    resilience: { ...DEFAULT_RESILIENCE, deadlines: { ...DEFAULT_RESILIENCE.deadlines, ttftTimeoutMs: options.ttftTimeoutMs ?? 10_000 } },
  };
  const pipeline = new TokenCountPipeline(services, settings);
  const handle = async (raw = new FakeResponse()) => {
    await pipeline.handle({ requestId: 'req-1', headers: {}, body: BODY, raw: raw.asRaw }, anthropicTokenCount);
    return { raw, answer: raw.body === null ? null : (JSON.parse(raw.body) as { input_tokens: number }), source: raw.headers[TOKEN_COUNT_HEADER] };
  };
  return { health, load, gate, deployment, calls, handle };
}

/** A provider call that never answers by itself: it ends only when its signal aborts (as undici's does). */
const untilAborted = (call: UpstreamCall) =>
  new Promise<number>((_, reject) => call.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));

describe('token counting through the deployment gate', () => {
  test('the provider counts while holding the slot, and the slot comes back after the answer', async () => {
    let heldDuringCall = -1;
    const { load, health, handle } = setup(async () => {
      heldDuringCall = load.total;
      return PROVIDER_COUNT;
    });
    const { answer, source } = await handle();
    expect([answer, source]).toEqual([{ input_tokens: PROVIDER_COUNT }, 'provider']);
    expect(heldDuringCall).toBe(1);
    expect(load.total).toBe(0);
    expect(health.stateOf('counter')).toBe('closed');
  });

  test('an open breaker: no provider call, the estimate answers, labelled so', async () => {
    const { gate, deployment, calls, handle } = setup(async () => PROVIDER_COUNT, { breaker: { consecutiveFailures: 1 } });
    ((await gate.enter(deployment)) as GateLease).leave('failure', null);
    const { answer, source } = await handle();
    expect([answer, source]).toEqual([{ input_tokens: ESTIMATE }, 'estimate']);
    expect(calls).toHaveLength(0);
  });

  test('a saturated deployment: no provider call, the estimate answers', async () => {
    const { gate, deployment, load, calls, handle } = setup(async () => PROVIDER_COUNT);
    const held = (await gate.enter(deployment)) as GateLease;
    const { source } = await handle();
    expect(source).toBe('estimate');
    expect(calls).toHaveLength(0);
    held.leave('neutral', null);
    expect(load.total).toBe(0);
  });

  test('a provider 5xx on count: the estimate answers, the slot comes back, the breaker counts a failure (and opens)', async () => {
    const { load, health, calls, handle } = setup(async () => {
      throw new ProviderError('transient', 'provider returned 503', 503);
    }, { breaker: { consecutiveFailures: 1 } });
    const { answer, source } = await handle();
    expect([answer, source]).toEqual([{ input_tokens: ESTIMATE }, 'estimate']);
    expect(load.total).toBe(0);
    expect(health.unavailable('counter')).toMatchObject({ reason: 'circuit_open' });
    await handle();
    expect(calls).toHaveLength(1);
  });

  test("a provider's retry-after throttles the deployment for the next count, without counting against the breaker", async () => {
    const { health, calls, handle } = setup(async () => {
      throw new ProviderError('rate_limited', 'provider returned 429', 429, 60_000);
    }, { breaker: { consecutiveFailures: 1 } });
    expect((await handle()).source).toBe('estimate');
    expect(health.unavailable('counter')).toMatchObject({ reason: 'rate_limited' });
    expect(health.stateOf('counter')).toBe('closed');
    await handle();
    expect(calls).toHaveLength(1);
  });

  test("the caller's own mistake (a provider 400) reaches the caller; the slot comes back and the breaker learns nothing", async () => {
    const { load, health, handle } = setup(async () => {
      throw new ProviderError('invalid_request', 'provider returned 400', 400, null, { providerMessage: 'messages: too many' });
    }, { breaker: { consecutiveFailures: 1 } });
    const error = await handle().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400 });
    expect(load.total).toBe(0);
    expect(health.unavailable('counter')).toBeNull();
  });

  test('a provider slower than the first-token deadline: the call is aborted, the estimate answers, the breaker counts a failure', async () => {
    const { load, health, calls, handle } = setup(untilAborted, { breaker: { consecutiveFailures: 1 }, ttftTimeoutMs: 50 });
    const { source } = await handle();
    expect(source).toBe('estimate');
    expect(calls[0].signal.aborted).toBe(true);
    expect(load.total).toBe(0);
    expect(health.unavailable('counter')).toMatchObject({ reason: 'circuit_open' });
  });

  test('a client that goes away cancels the provider call; nothing is written and the breaker learns nothing', async () => {
    const raw = new FakeResponse();
    const { load, health, calls, handle } = setup((call) => {
      setImmediate(() => raw.hangUp());
      return untilAborted(call);
    }, { breaker: { consecutiveFailures: 1 } });
    await handle(raw);
    expect(calls[0].signal.reason).toMatchObject({ errorClass: 'cancelled' });
    expect(raw.status).toBeNull();
    expect(load.total).toBe(0);
    expect(health.unavailable('counter')).toBeNull();
  });

  test("the gateway's own failure during the call is our 500; the slot comes back and the breaker learns nothing", async () => {
    const { load, health, handle } = setup(async () => {
      throw new RangeError('Maximum call stack size exceeded');
    }, { breaker: { consecutiveFailures: 1 } });
    await expect(handle()).rejects.toMatchObject({ status: 500, code: 'internal_error' });
    expect(load.total).toBe(0);
    expect(health.unavailable('counter')).toBeNull();
  });
});

