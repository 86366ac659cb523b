import { GatewayFault } from '../../modules/inference/pipeline/gateway-fault.js';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { type AttemptReport, type AttemptTurn, runAttemptLoop } from '../../modules/inference/pipeline/attempt-loop.js';
import { DeploymentGate } from '../../modules/inference/resilience/deployment-gate.js';
import { DeploymentHealth } from '../../modules/inference/resilience/deployment-health.js';
import { DEFAULT_RESILIENCE } from '../../modules/inference/resilience/resilience-settings.js';
import { DeploymentConcurrency } from '../../modules/limits/deployment-concurrency.js';
import { testAlias, testCandidates, testDeployment } from '../support/routing-fixtures.js';

const retry = { ...DEFAULT_RESILIENCE.retry, baseBackoffMs: 1, maxBackoffMs: 1 };

function setup(breaker = {}) {
  const health = new DeploymentHealth({ ...DEFAULT_RESILIENCE.breaker, ...breaker });
  const load = new DeploymentConcurrency();
  const gate = new DeploymentGate(health, load);
  const primary = testDeployment('primary');
  const backup = testDeployment('backup');
  const candidates = testCandidates(testAlias([primary, backup]));
  return { health, load, gate, candidates, primary, backup };
}

/** An attempt function answering from a script, one entry per call, recording the turns it saw. */
function scripted(script: Array<ProviderError | 'answer' | Error>) {
  const turns: AttemptTurn[] = [];
  const attempt = async (turn: AttemptTurn): Promise<AttemptReport<string>> => {
    turns.push(turn);
    const next = script.shift();
    if (next === 'answer') return { answer: `answered by ${turn.candidate.deployment.id}`, outcome: 'success', error: null };
    if (next instanceof ProviderError) return { answer: null, outcome: 'failed', error: next };
    throw next ?? new Error('script ran out');
  };
  return { attempt, turns };
}

const loop = (gate: DeploymentGate, candidates: ReturnType<typeof testCandidates>, attempt: (turn: AttemptTurn) => Promise<AttemptReport<string>>, overrides = {}) =>
  runAttemptLoop<string>({
    candidates, gate, retry, maxAttempts: 3, signal: new AbortController().signal, remainingMs: () => 60_000, random: () => 0, attempt, ...overrides,
  });

describe('the attempt loop', () => {
  test('a transient failure falls back to the next route; the routing record says why', async () => {
    const { gate, candidates, health } = setup();
    const { attempt, turns } = scripted([new ProviderError('transient', 'boom', 500), 'answer']);
    const result = await loop(gate, candidates, attempt);
    expect(result).toEqual({ kind: 'answered', answer: 'answered by backup' });
    expect(turns.map((t) => [t.attempt, t.candidate.deployment.id])).toEqual([[1, 'primary'], [2, 'backup']]);
    expect(turns[1].why).toBe('attempt 2: transient: fall back → backup');
    expect(health.stateOf('primary')).toBe('closed'); // one failure does not open it
  });

  test('a refusal about the request itself stops at once and is the last error', async () => {
    const { gate, candidates } = setup();
    const { attempt, turns } = scripted([new ProviderError('invalid_request', 'bad', 400)]);
    const result = await loop(gate, candidates, attempt);
    expect(turns).toHaveLength(1);
    expect(result).toMatchObject({ kind: 'exhausted', lastError: { errorClass: 'invalid_request' }, tried: [{ route: 'chat#1', errorClass: 'invalid_request' }] });
  });

  test('with one route, a transient failure is retried on the same deployment after the backoff', async () => {
    const { gate, primary } = setup();
    const { attempt, turns } = scripted([new ProviderError('connection', 'reset'), 'answer']);
    const result = await loop(gate, testCandidates(testAlias([primary])), attempt);
    expect(result).toEqual({ kind: 'answered', answer: 'answered by primary' });
    expect(turns.map((t) => t.candidate.deployment.id)).toEqual(['primary', 'primary']);
    expect(turns[1].why).toMatch(/^attempt 2: connection: retry 1 after \d+ ms backoff → primary$/);
  });

  test('the attempt budget bounds retries and fallbacks together', async () => {
    const { gate, candidates } = setup();
    const { attempt, turns } = scripted([new ProviderError('transient', 'a'), new ProviderError('transient', 'b')]);
    const result = await loop(gate, candidates, attempt, { maxAttempts: 1 });
    expect(turns).toHaveLength(1);
    expect(result.kind).toBe('exhausted');
  });

  test('a deployment the gate refuses is listed with the refusal and never called', async () => {
    const { gate, candidates, load } = setup();
    const busy = testDeployment('primary', { limits: { rpm: null, tpm: null, maxConcurrency: 1 } });
    const held = load.tryAcquire(busy)!;
    const { attempt, turns } = scripted(['answer']);
    const result = await loop(gate, testCandidates(testAlias([busy, candidates[1].deployment])), attempt);
    expect(result).toEqual({ kind: 'answered', answer: 'answered by backup' });
    expect(turns.map((t) => t.candidate.deployment.id)).toEqual(['backup']);
    expect(load.total).toBe(1); // only the slot held outside the loop
    held.release();
  });

  test('every lease is left: a failure counts against the breaker, the slot comes back', async () => {
    const { gate, load, health } = setup({ consecutiveFailures: 2 });
    const limited = testDeployment('limited', { limits: { rpm: null, tpm: null, maxConcurrency: 1 } });
    for (let i = 0; i < 2; i++) {
      const { attempt } = scripted([new ProviderError('transient', 'down', 500)]);
      await loop(gate, testCandidates(testAlias([limited])), attempt, { maxAttempts: 1 });
    }
    expect(load.total).toBe(0);
    expect(health.unavailable('limited')).toMatchObject({ reason: 'circuit_open' });
  });

  test("an attempt that throws (the gateway's own failure) leaves its lease neutral: no breaker ever opens", async () => {
    const { gate, load, health } = setup({ consecutiveFailures: 1 });
    const solo = testCandidates(testAlias([testDeployment('solo')]));
    for (let i = 0; i < 3; i++) {
      const { attempt } = scripted([GatewayFault.internal(new RangeError('Maximum call stack size exceeded'))]);
      await expect(loop(gate, solo, attempt)).rejects.toBeInstanceOf(GatewayFault);
    }
    expect(health.unavailable('solo')).toBeNull();
    expect(load.total).toBe(0);
  });

  test('an aborted request makes no further attempt', async () => {
    const { gate, candidates } = setup();
    const abort = new AbortController();
    abort.abort(new ProviderError('cancelled', 'gone'));
    const { attempt, turns } = scripted(['answer']);
    const result = await loop(gate, candidates, attempt, { signal: abort.signal });
    expect(turns).toHaveLength(0);
    expect(result.kind).toBe('exhausted');
  });
});
