import { Logger } from '@nestjs/common';
import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { recordAttempt, runAdmittedAttempts } from '../../modules/inference/pipeline/admitted-attempts.js';
import type { DurabilityProfile } from '../../modules/inference/pipeline/durability.js';
import type { InferenceServices, PipelineSettings } from '../../modules/inference/pipeline/inference-services.js';
import { RequestJournal } from '../../modules/inference/pipeline/request-journal.js';
import { DeploymentGate } from '../../modules/inference/resilience/deployment-gate.js';
import { DeploymentHealth } from '../../modules/inference/resilience/deployment-health.js';
import { DEFAULT_RESILIENCE } from '../../modules/inference/resilience/resilience-settings.js';
import { DeploymentConcurrency } from '../../modules/limits/deployment-concurrency.js';
import { StubCommitter, admittedData, testRoutedRequest } from '../support/pipeline-fakes.js';
import { testAlias, testCandidates, testDeployment } from '../support/routing-fixtures.js';

// The journal logs the failed appends these tests cause on purpose.
Logger.overrideLogger(false);

const SUCCESS = { status: 'success' as const, httpStatus: 200, errorCode: null, cacheHit: false };
const alias = testAlias([testDeployment('primary'), testDeployment('backup')]);
const [primary, backup] = testCandidates(alias);

const journal = (profile: DurabilityProfile, committer: StubCommitter) => RequestJournal.forKey(committer.asCommitter, profile, 'node-1', 'req-1', 'key-1');

/** A request admitted under `profile` whose attempts (first on primary, then on backup) ended as `outcomes`, recorded as the pipeline records them. */
async function withAttempts(profile: DurabilityProfile, committer: StubCommitter, outcomes: Array<'failed' | 'success'>) {
  const admitted = await testRoutedRequest(alias, { committer, profile });
  outcomes.forEach((outcome, i) =>
    recordAttempt(admitted, { candidate: i === 0 ? primary : backup, attempt: i + 1, why: `attempt ${i + 1}`, trial: false }, {
      outcome, error: outcome === 'failed' ? new ProviderError('transient', 'provider returned 503', 503) : null,
      usage: outcome === 'failed' ? null : { input: 10, cachedInput: 0, cacheWrite: 0, output: 5, reasoning: 0 }, evidence: 'provider',
      latencyMs: 1, ttftMs: null, providerRequestId: null,
    }),
  );
  admitted.release();
  return admitted.journal;
}

describe('the request journal over a stub committer', () => {
  test('default durability: nothing is appended before the end, then RequestAdmitted, the attempts and RequestCompleted in ONE append', async () => {
    const committer = new StubCommitter();
    const j = await withAttempts('default', committer, ['failed', 'success']);
    expect(committer.appends).toHaveLength(0);
    await j.complete(SUCCESS);
    expect(committer.types).toEqual([['RequestAdmitted', 'AttemptFinished', 'AttemptFinished', 'RequestCompleted']]);
    expect(committer.appends[0]).toMatchObject({ streamId: 'request-req-1', expectedVersion: 'no-stream' });
  });

  test('strict durability: RequestAdmitted is appended (and awaited) before dispatch, the terminal events after it at version 1', async () => {
    const committer = new StubCommitter();
    const j = journal('strict', committer);
    await j.admit(admittedData('req-1'));
    expect(committer.types).toEqual([['RequestAdmitted']]);
    expect(committer.appends[0].expectedVersion).toBe('no-stream');
    await j.complete(SUCCESS);
    expect(committer.types).toEqual([['RequestAdmitted'], ['RequestCompleted']]);
    expect(committer.appends[1].expectedVersion).toBe(1);
  });

  test('strict durability: a RequestAdmitted that cannot be committed refuses the request with a 503 before anything is sent', async () => {
    const committer = new StubCommitter();
    committer.outcome = new Error('connection refused');
    const j = journal('strict', committer);
    const refusal = await j.admit(admittedData('req-1')).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(GatewayError);
    expect(refusal).toMatchObject({ status: 503, code: 'durability_unavailable' });
  });

  test.each(['default', 'strict'] as const)('%s durability: a failed terminal append surfaces as the error of complete()', async (profile) => {
    const committer = new StubCommitter();
    const j = await withAttempts(profile, committer, ['success']);
    committer.outcome = new Error('connection terminated');
    await expect(j.complete(SUCCESS)).rejects.toThrow('connection terminated');
  });

  test('async durability: complete() resolves though the append fails (the loss is logged, not thrown)', async () => {
    const committer = new StubCommitter();
    committer.outcome = new Error('connection terminated');
    const j = await withAttempts('async', committer, ['success']);
    await expect(j.complete(SUCCESS)).resolves.toBeUndefined();
    expect(committer.types).toEqual([['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']]);
  });

  test('complete() twice appends once: the second call gets the first one\'s promise', async () => {
    const committer = new StubCommitter();
    const j = await withAttempts('default', committer, ['success']);
    const first = j.complete(SUCCESS);
    expect(j.complete({ ...SUCCESS, status: 'failed', httpStatus: 502 })).toBe(first);
    await first;
    expect(committer.appends).toHaveLength(1);
  });

  test('attempts are appended in order, numbered 1..n by the attempt loop, and settled: totals and fallback depth', async () => {
    const committer = new StubCommitter();
    const admitted = await testRoutedRequest(testAlias(['primary', 'backup', 'spare'].map((id) => testDeployment(id))), { committer });
    const services = { gate: new DeploymentGate(new DeploymentHealth(DEFAULT_RESILIENCE.breaker), new DeploymentConcurrency()), adapters: { for: () => ({}) }, random: () => 0 } as unknown as InferenceServices;
    const settings: PipelineSettings = { durability: 'default', nodeId: 'node-1', resilience: DEFAULT_RESILIENCE };
    const failures = [new ProviderError('transient', 'provider returned 503', 503), new ProviderError('connection', 'reset')];
    const answer = await runAdmittedAttempts<string>(services, settings, admitted, async (turn) => {
      const error = failures.shift() ?? null;
      const usage = error ? null : { input: 10, cachedInput: 0, cacheWrite: 0, output: 5, reasoning: 0 };
      recordAttempt(admitted, turn, { outcome: error ? 'failed' : 'success', error, usage, evidence: 'provider', latencyMs: 1, ttftMs: null, providerRequestId: null });
      return error ? { answer: null, outcome: 'failed', error } : { answer: `answered by ${turn.candidate.deployment.id}`, outcome: 'success', error: null };
    });
    await admitted.journal.complete(SUCCESS);
    admitted.release();
    expect(answer).toBe('answered by spare');
    const events = committer.appends[0].events;
    const attempts = events.filter((e) => e.type === 'AttemptFinished').map((e) => e.data as { attempt: number; deploymentId: string; outcome: string });
    expect(attempts.map((a) => [a.attempt, a.deploymentId, a.outcome])).toEqual([[1, 'primary', 'failed'], [2, 'backup', 'failed'], [3, 'spare', 'success']]);
    expect(events.at(-1)!.data).toMatchObject({
      status: 'success', fallbackDepth: 2, totals: { attempts: 3, usage: { input: 10, output: 5 } },
    });
  });
});
