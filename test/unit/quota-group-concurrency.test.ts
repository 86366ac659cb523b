import { ProviderError } from '../../modules/canonical/provider-error.js';
import { type AttemptReport, type AttemptTurn, runAttemptLoop } from '../../modules/inference/pipeline/attempt-loop.js';
import { DeploymentGate } from '../../modules/inference/resilience/deployment-gate.js';
import { DeploymentHealth } from '../../modules/inference/resilience/deployment-health.js';
import { DEFAULT_RESILIENCE } from '../../modules/inference/resilience/resilience-settings.js';
import { DeploymentConcurrency } from '../../modules/limits/deployment-concurrency.js';
import { LimitsRedis } from '../../modules/limits/limits-redis.js';
import { SharedConcurrency, type ConcurrencyScope } from '../../modules/limits/shared-concurrency.js';
import { permit } from '../../modules/limits/permit.js';
import { testAlias, testCandidates, testDeployment } from '../support/routing-fixtures.js';

const retry = { ...DEFAULT_RESILIENCE.retry, baseBackoffMs: 1, maxBackoffMs: 1 };

/** The counter other nodes share, in memory: leases per scope, with room for `room[scope]` at most. */
class SharedCounter {
  readonly held = new Map<string, Set<string>>();
  readonly taken: string[] = [];
  constructor(private readonly othersHold: Record<string, number> = {}) {}

  async tryAcquire(scopes: readonly ConcurrencyScope[], holderId: string) {
    const [scope] = scopes;
    const leases = this.held.get(scope.id) ?? new Set<string>();
    if (leases.size + (this.othersHold[scope.id] ?? 0) >= scope.limit) return null;
    leases.add(holderId);
    this.held.set(scope.id, leases);
    this.taken.push(`${scope.kind}:${scope.id}`);
    return permit(() => leases.delete(holderId));
  }

  get total(): number {
    let sum = 0;
    for (const leases of this.held.values()) sum += leases.size;
    return sum;
  }
}

function setup(othersHold: Record<string, number> = {}) {
  const shared = new SharedCounter(othersHold);
  const health = new DeploymentHealth(DEFAULT_RESILIENCE.breaker);
  const load = new DeploymentConcurrency(shared);
  const gate = new DeploymentGate(health, load);
  const limits = { rpm: null, tpm: null, maxConcurrency: 2 };
  const a = testDeployment('a', { quotaGroup: 'pool', limits });
  const b = testDeployment('b', { quotaGroup: 'pool', limits });
  const spill = testDeployment('spill');
  return { shared, health, load, gate, a, b, spill, candidates: testCandidates(testAlias([a, b, spill])) };
}

const loop = (gate: DeploymentGate, candidates: ReturnType<typeof testCandidates>, attempt: (turn: AttemptTurn) => Promise<AttemptReport<string>>, signal = new AbortController().signal) =>
  runAttemptLoop<string>({ candidates, gate, retry, maxAttempts: 3, signal, remainingMs: () => 60_000, random: () => 0, attempt });

describe('deployment concurrency per quota group, on this node and across nodes', () => {
  test("the deployments of one group share this node's count, each against its own limit", () => {
    const { load, a, b } = setup();
    const first = load.tryAcquire(a)!;
    const second = load.tryAcquire(b)!;
    expect(load.tryAcquire(a)).toBeNull();
    expect(load.saturated(b)).toBe(true);
    first.release();
    expect(load.saturated(b)).toBe(false);
    second.release();
    expect(load.total).toBe(0);
  });

  test('a group the other nodes fill is skipped as saturated: the local slot and the breaker pass go back, the overflow route serves', async () => {
    const { gate, load, health, shared, candidates } = setup({ pool: 2 });
    const seen: string[] = [];
    const result = await loop(gate, candidates, async (turn) => {
      seen.push(turn.candidate.deployment.id);
      expect(load.total).toBe(1); // only the serving call holds a slot
      return { answer: 'ok', outcome: 'success', error: null };
    });
    expect(result).toEqual({ kind: 'answered', answer: 'ok' });
    expect(seen).toEqual(['spill']);
    expect(load.total).toBe(0);
    expect(shared.total).toBe(0);
    expect(health.stateOf('a')).toBe('closed');
  });

  test('every lease is given back on every path: success, a failure that falls back, the gateway failing, a cancelled stream', async () => {
    const { gate, load, shared, candidates } = setup();
    const check = () => {
      expect(load.total).toBe(0);
      expect(shared.total).toBe(0);
    };

    await loop(gate, candidates, async () => ({ answer: 'ok', outcome: 'success', error: null }));
    check();

    const fellBack = await loop(gate, candidates, async (turn) => (turn.attempt === 1
      ? { answer: null, outcome: 'failed', error: new ProviderError('transient', 'boom', 500) }
      : { answer: 'ok', outcome: 'success', error: null }));
    expect(fellBack).toEqual({ kind: 'answered', answer: 'ok' });
    check();

    await expect(loop(gate, candidates, async () => {
      throw new Error('the relay broke');
    })).rejects.toThrow('the relay broke');
    check();

    // A stream whose client goes away mid-answer: the attempt ends when the request's signal aborts.
    const client = new AbortController();
    let streaming!: () => void;
    const started = new Promise<void>((resolve) => (streaming = resolve));
    const cancelled = loop(gate, candidates, (turn) => new Promise<AttemptReport<string>>((resolve) => {
      expect(shared.held.get('pool')?.size).toBe(1);
      client.signal.addEventListener('abort', () => resolve({ answer: `cut short on ${turn.candidate.deployment.id}`, outcome: 'cancelled', error: new ProviderError('cancelled', 'client left', null) }));
      streaming();
    }), client.signal);
    await started;
    expect(load.total).toBe(1);
    client.abort();
    expect(await cancelled).toEqual({ kind: 'answered', answer: 'cut short on a' });
    check();
    expect(shared.taken.every((scope) => scope === 'quota_group:pool')).toBe(true);
    expect(shared.taken.length).toBeGreaterThanOrEqual(5);
  });

  test('with Redis configured but unreachable, the group is counted by this node alone (no outage)', async () => {
    const redis = new LimitsRedis('redis://127.0.0.1:1', 'unit-unreachable');
    try {
      const load = new DeploymentConcurrency(new SharedConcurrency(redis));
      const deployment = testDeployment('a', { quotaGroup: 'pool', limits: { rpm: null, tpm: null, maxConcurrency: 1 } });
      const lease = await load.acrossNodes(deployment, 60_000);
      expect(lease).not.toBeNull();
      lease!.release();
      expect(redis.status()).toMatchObject({ backend: 'local', degraded: true });
    } finally {
      await redis.close();
    }
  });
});
