import { ProviderError } from '../../modules/canonical/provider-error.js';
import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { GatewayFault } from '../../modules/inference/pipeline/gateway-fault.js';
import type { InferenceServices, PipelineSettings } from '../../modules/inference/pipeline/inference-services.js';
import { failedOutcome, recordAttempt, runAdmittedAttempts } from '../../modules/inference/pipeline/admitted-attempts.js';
import type { AttemptReport, AttemptTurn } from '../../modules/inference/pipeline/attempt-loop.js';
import type { RoutedRequest } from '../../modules/inference/pipeline/request-admission.js';
import { DeploymentGate } from '../../modules/inference/resilience/deployment-gate.js';
import { DeploymentHealth, MAX_THROTTLE_MS } from '../../modules/inference/resilience/deployment-health.js';
import { DEFAULT_RESILIENCE } from '../../modules/inference/resilience/resilience-settings.js';
import { DeploymentConcurrency } from '../../modules/limits/deployment-concurrency.js';
import type { ResolvedAlias } from '../../projections/routing-snapshot/routing-snapshot.js';
import { FakeResponse, StubCommitter, testRoutedRequest } from '../support/pipeline-fakes.js';
import { testAlias, testDeployment } from '../support/routing-fixtures.js';

const settings: PipelineSettings = {
  durability: 'default',
  nodeId: 'node-1',
  resilience: { ...DEFAULT_RESILIENCE, retry: { ...DEFAULT_RESILIENCE.retry, baseBackoffMs: 1, maxBackoffMs: 1, maxAttempts: 3 } },
};

/**
 * The attempts of an admitted request over a real deployment gate and a real journal (default durability,
 * so the terminal append carries RequestAdmitted too); the attempt function answers from a script and
 * records each attempt as the operations' attempts do.
 */
async function setup(script: Array<'answer' | ProviderError | Error>, alias: ResolvedAlias = testAlias([testDeployment('primary'), testDeployment('backup')])) {
  const gate = new DeploymentGate(new DeploymentHealth(DEFAULT_RESILIENCE.breaker), new DeploymentConcurrency());
  const committer = new StubCommitter();
  const raw = new FakeResponse();
  const admitted = await testRoutedRequest(alias, { committer, raw });
  admittedRequests.push(admitted);
  const adapter = { name: 'the openai-compatible adapter' };
  const services = { gate, adapters: { for: () => adapter }, random: () => 0 } as unknown as InferenceServices;
  const seen: Array<{ deployment: string; adapter: unknown }> = [];
  const attempt = async (turn: AttemptTurn, given: unknown): Promise<AttemptReport<string>> => {
    seen.push({ deployment: turn.candidate.deployment.id, adapter: given });
    const next = script.shift();
    if (next === 'answer') {
      recordAttempt(admitted, turn, { outcome: 'success', error: null, usage: { input: 3, cachedInput: 0, cacheWrite: 0, output: 5, reasoning: 0 }, evidence: 'provider', latencyMs: 1, ttftMs: null, providerRequestId: null });
      return { answer: `answered by ${turn.candidate.deployment.id}`, outcome: 'success', error: null };
    }
    if (next instanceof ProviderError) {
      recordAttempt(admitted, turn, { outcome: failedOutcome(next), error: next, usage: null, evidence: 'provider', latencyMs: 1, ttftMs: null, providerRequestId: null });
      return { answer: null, outcome: failedOutcome(next), error: next };
    }
    throw next ?? new Error('script ran out');
  };
  const run = () => runAdmittedAttempts(services, settings, admitted, attempt);
  return { run, committer, seen, adapter, admitted, raw, gate };
}

const admittedRequests: RoutedRequest[] = [];
afterEach(() => admittedRequests.splice(0).forEach((request) => request.release()));

const terminal = (committer: StubCommitter) => committer.appends.at(-1)!.events.at(-1)!.data as { status: string; httpStatus: number; errorCode: string | null };

describe('runAdmittedAttempts', () => {
  test('a fallback answers through the next route with the adapter of its provider; success is left to the caller to complete', async () => {
    const { run, seen, adapter, committer } = await setup([new ProviderError('transient', 'upstream said 500', 500), 'answer']);
    await expect(run()).resolves.toBe('answered by backup');
    expect(seen).toEqual([{ deployment: 'primary', adapter }, { deployment: 'backup', adapter }]);
    expect(committer.appends).toEqual([]);
  });

  test('every route failing: a 503 that names routes, never deployments; the request is settled as failed with both attempts', async () => {
    const { run, committer } = await setup([new ProviderError('transient', 'boom from primary', 500), new ProviderError('transient', 'boom from backup', 502)]);
    const error = (await run().then(() => null, (e: unknown) => e)) as GatewayError;
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.status).toBe(503);
    const shown = JSON.stringify({ message: error.message, detail: error.detail });
    expect(shown).toContain('chat#1');
    expect(shown).toContain('chat#2');
    expect(shown).not.toMatch(/primary|backup|boom/);
    expect(committer.types).toEqual([['RequestAdmitted', 'AttemptFinished', 'AttemptFinished', 'RequestCompleted']]);
    expect(terminal(committer)).toMatchObject({ status: 'failed', httpStatus: 503 });
  });

  test("a refusal about the request itself is the provider's status, not a 503, and is not retried", async () => {
    const { run, seen, committer } = await setup([new ProviderError('invalid_request', 'bad request', 400)]);
    await expect(run()).rejects.toMatchObject({ status: 400 });
    expect(seen).toHaveLength(1);
    expect(terminal(committer)).toMatchObject({ status: 'failed', httpStatus: 400 });
  });

  test("the alias's maxAttempts bounds the attempts below the node's retry setting", async () => {
    const base = testAlias([testDeployment('a'), testDeployment('b'), testDeployment('c')]);
    const alias: ResolvedAlias = { ...base, policy: { ...base.policy, maxAttempts: 1 } };
    const { run, seen } = await setup([new ProviderError('transient', 'x', 500), 'answer', 'answer'], alias);
    await expect(run()).rejects.toMatchObject({ status: 503 });
    expect(seen.map((s) => s.deployment)).toEqual(['a']);
  });

  test('a fault of the gateway during an attempt ends the request with its error and records no attempt for it', async () => {
    const fault = GatewayFault.internal(new TypeError('a bug of ours'));
    const { run, committer } = await setup([fault]);
    await expect(run()).rejects.toBe(fault.error);
    expect(committer.types).toEqual([['RequestAdmitted', 'RequestCompleted']]);
    expect(terminal(committer)).toMatchObject({ status: 'failed', httpStatus: 500, errorCode: 'internal_error' });
  });

  test('a client that went away: cancelled, 499, and no further attempt', async () => {
    const { run, seen, raw, committer } = await setup([new ProviderError('transient', 'x', 500), 'answer']);
    raw.hangUp();
    await expect(run()).rejects.toMatchObject({ status: 499, code: 'client_disconnected' });
    expect(seen).toEqual([]);
    expect(terminal(committer)).toMatchObject({ status: 'cancelled', httpStatus: 499 });
  });
});

describe('the retry-after a client is told when every route failed', () => {
  const DAYS = 999_999_000; // a provider's `retry-after: 999999`, in ms

  test('providers asking for 999999 s: the client is told 300 s, the most the gateway holds a route back, and the route is held exactly that long', async () => {
    const { run, gate } = await setup([new ProviderError('rate_limited', 'x', 429, DAYS), new ProviderError('overloaded', 'y', 503, DAYS)]);
    const before = Date.now();
    const error = (await run().then(() => null, (e: unknown) => e)) as GatewayError;
    expect(error.status).toBe(503);
    expect(error.headers['retry-after']).toBe(String(MAX_THROTTLE_MS / 1000));
    expect(error.detail).toMatchObject({ retry_after_s: MAX_THROTTLE_MS / 1000 });
    // What the client was told is when the gateway calls the routes again.
    for (const deployment of ['primary', 'backup']) {
      const until = gate.recoversAt(deployment)!;
      expect(until).toBeGreaterThanOrEqual(before + MAX_THROTTLE_MS);
      expect(until).toBeLessThanOrEqual(Date.now() + MAX_THROTTLE_MS);
    }
  });

  test('every route rate limited with a huge retry-after: the 429 says 300 s too', async () => {
    const { run } = await setup([new ProviderError('rate_limited', 'x', 429, DAYS), new ProviderError('rate_limited', 'y', 429, DAYS)]);
    await expect(run()).rejects.toMatchObject({ status: 429, code: 'rate_limited', headers: { 'retry-after': '300' } });
  });

  test('a retry-after within the bound is the route\'s throttle, rounded up to whole seconds', async () => {
    const { run } = await setup([new ProviderError('rate_limited', 'x', 429, 29_900), new ProviderError('overloaded', 'y', 503, 41_000)]);
    await expect(run()).rejects.toMatchObject({ status: 503, headers: { 'retry-after': '30' } });
  });

  test('a failure the gateway does not hold a route back for (a 500 with a retry-after): the route is tried by the next request, so 1 s', async () => {
    const { run, gate } = await setup([new ProviderError('transient', 'x', 500, DAYS), new ProviderError('transient', 'y', 502, DAYS)]);
    await expect(run()).rejects.toMatchObject({ status: 503, headers: { 'retry-after': '1' } });
    expect(gate.recoversAt('primary')).toBeNull();
  });
});
