import type { BreakerEvent } from '../../events/breaker-events.js';
import type { AppendRequest } from '../../src/kernel/event-store/event-store.js';
import { BreakerJournal } from '../../modules/inference/resilience/breaker-journal.js';
import { type BreakerPass, type BreakerTransition, CircuitBreaker } from '../../modules/inference/resilience/circuit-breaker.js';
import { DeploymentHealth, type HealthPass } from '../../modules/inference/resilience/deployment-health.js';
import { DEFAULT_RESILIENCE, type BreakerSettings } from '../../modules/inference/resilience/resilience-settings.js';

const settings: BreakerSettings = { ...DEFAULT_RESILIENCE.breaker };

/** Lets a call through at `now` and records its outcome; returns the transition it caused. */
function call(breaker: CircuitBreaker, now: number, signal: 'success' | 'failure' | 'neutral'): BreakerTransition | null | 'refused' {
  const { pass } = breaker.tryPass(now);
  if (!pass) return 'refused';
  return breaker.record(pass, signal, now);
}

describe('CircuitBreaker', () => {
  test('the defaults are the issue\'s: >50% of ≥20 samples in 60 s, 5 in a row, 30 s doubling to 5 min, 5 trial successes', () => {
    expect(settings).toMatchObject({
      windowMs: 60_000, minSamples: 20, failureRateThreshold: 0.5, consecutiveFailures: 5,
      cooldownMs: 30_000, maxCooldownMs: 300_000, trialSuccesses: 5,
    });
  });

  test('opens on N consecutive failures, and a success in between resets the run', () => {
    const breaker = new CircuitBreaker(settings);
    for (let i = 0; i < 4; i++) expect(call(breaker, 1000 + i, 'failure')).toBeNull();
    expect(call(breaker, 1010, 'success')).toBeNull();
    for (let i = 0; i < 4; i++) expect(call(breaker, 1020 + i, 'failure')).toBeNull();
    const opened = call(breaker, 1030, 'failure') as BreakerTransition;
    expect(opened).toMatchObject({ to: 'open', reason: 'consecutive_failures', cooldownMs: 30_000, openUntil: 31_030 });
    expect(opened.to === 'open' && opened.counts).toEqual({ failures: 9, samples: 10, consecutiveFailures: 5 });
    expect(call(breaker, 1031, 'success')).toBe('refused');
  });

  test('opens when the failure rate exceeds 50% over at least 20 samples, never on fewer samples or exactly 50%', () => {
    const lenient = { ...settings, consecutiveFailures: 1000 };
    // 19 samples, 12 failures (63%): not enough samples.
    const few = new CircuitBreaker(lenient);
    for (let i = 0; i < 19; i++) expect(call(few, 5000 + i, i % 3 === 0 ? 'success' : 'failure')).toBeNull();
    // 20 samples at exactly 50%: not above the threshold.
    const half = new CircuitBreaker(lenient);
    for (let i = 0; i < 20; i++) expect(call(half, 5000 + i, i % 2 === 0 ? 'success' : 'failure')).toBeNull();
    // The 21st sample, a failure, tips it to 11/21 > 50%.
    expect(call(half, 5020, 'failure')).toMatchObject({ to: 'open', reason: 'failure_rate', counts: { failures: 11, samples: 21 } });
  });

  test('only the last 60 s count: old failures age out of the window', () => {
    const breaker = new CircuitBreaker({ ...settings, consecutiveFailures: 1000 });
    for (let i = 0; i < 15; i++) call(breaker, 1000 + i, 'failure');
    // 61 s later those 15 failures are gone; 5 successes and 15 failures are 75% of only 20.
    for (let i = 0; i < 5; i++) expect(call(breaker, 62_000 + i, 'success')).toBeNull();
    for (let i = 0; i < 14; i++) expect(call(breaker, 62_100 + i, 'failure')).toBeNull();
    expect(breaker.describe(62_200).counts).toMatchObject({ failures: 14, samples: 19 });
    expect(call(breaker, 62_300, 'failure')).toMatchObject({ to: 'open', reason: 'failure_rate', counts: { failures: 15, samples: 20 } });
  });

  test('neutral outcomes (the caller\'s fault, rate limits) count for nothing', () => {
    const breaker = new CircuitBreaker(settings);
    for (let i = 0; i < 4; i++) call(breaker, 1000 + i, 'failure');
    for (let i = 0; i < 50; i++) expect(call(breaker, 2000 + i, 'neutral')).toBeNull();
    expect(breaker.describe(3000).counts).toEqual({ failures: 4, samples: 4, consecutiveFailures: 4 });
    expect(call(breaker, 3001, 'failure')).toMatchObject({ to: 'open' });
  });

  test('after the cool-down it goes half-open, lets a bounded number of trials through, and 5 trial successes close it', () => {
    const breaker = new CircuitBreaker({ ...settings, maxTrialsInFlight: 2 });
    for (let i = 0; i < 5; i++) call(breaker, 1000, 'failure');
    expect(breaker.tryPass(30_999).pass).toBeNull();
    const first = breaker.tryPass(31_000);
    expect(first.transition).toEqual({ to: 'half-open', source: 'local', openedForMs: 30_000 });
    expect(first.pass).toMatchObject({ trial: true });
    const second = breaker.tryPass(31_001).pass;
    expect(second).toMatchObject({ trial: true });
    expect(breaker.tryPass(31_002).pass).toBeNull(); // both trial slots taken
    expect(breaker.record(first.pass!, 'success', 31_010)).toBeNull();
    expect(breaker.record(second!, 'success', 31_011)).toBeNull();
    for (let i = 0; i < 2; i++) expect(call(breaker, 31_100 + i, 'success')).toBeNull();
    expect(call(breaker, 31_200, 'success')).toEqual({ to: 'closed', source: 'local', trialSuccesses: 5, originNodeId: null });
    expect(breaker.describe(31_300)).toMatchObject({ state: 'closed', cooldownMs: 30_000 });
    expect(breaker.tryPass(31_301).pass).toMatchObject({ trial: false });
  });

  test('a failed trial reopens it with the cool-down doubled, up to 5 minutes; recovery resets the doubling', () => {
    const breaker = new CircuitBreaker(settings);
    for (let i = 0; i < 5; i++) call(breaker, 0, 'failure');
    let now = 0;
    const cooldowns: number[] = [];
    for (let trip = 0; trip < 6; trip++) {
      now = breaker.describe(now).openUntil!;
      const reopened = call(breaker, now, 'failure') as Extract<BreakerTransition, { to: 'open' }>;
      expect(reopened).toMatchObject({ to: 'open', reason: 'trial_failed' });
      cooldowns.push(reopened.cooldownMs);
    }
    expect(cooldowns).toEqual([60_000, 120_000, 240_000, 300_000, 300_000, 300_000]);
    now = breaker.describe(now).openUntil!;
    for (let i = 0; i < 5; i++) call(breaker, now + i, 'success');
    expect(breaker.describe(now + 10)).toMatchObject({ state: 'closed', cooldownMs: 30_000 });
  });

  test('outcomes of calls let through before a transition are ignored', () => {
    const breaker = new CircuitBreaker(settings);
    const early: BreakerPass[] = [];
    for (let i = 0; i < 5; i++) early.push(breaker.tryPass(1000).pass!);
    for (let i = 0; i < 5; i++) breaker.record(breaker.tryPass(1000).pass!, 'failure', 1000);
    // Late answers from before the opening neither close nor extend anything.
    for (const pass of early) expect(breaker.record(pass, 'success', 1001)).toBeNull();
    expect(breaker.describe(1002).state).toBe('open');
    // A non-trial pass can never count as a trial.
    const trial = breaker.tryPass(31_000);
    expect(trial.pass!.trial).toBe(true);
    expect(breaker.record({ trial: false, generation: trial.pass!.generation }, 'success', 31_001)).toBeNull();
  });

  test('a remote opening holds traffic off until the remote deadline; a remote close only undoes a remote opening', () => {
    const breaker = new CircuitBreaker(settings);
    expect(breaker.adoptOpen(20_000, 10_000, 'node-a')).toMatchObject({ to: 'open', reason: 'remote', source: 'remote', originNodeId: 'node-a', cooldownMs: 10_000 });
    expect(breaker.tryPass(19_999).pass).toBeNull();
    expect(breaker.adoptOpen(15_000, 10_001, 'node-c')).toBeNull(); // already open for longer
    expect(breaker.adoptClose('node-a')).toMatchObject({ to: 'closed', source: 'remote' });
    expect(breaker.tryPass(10_002).pass).toMatchObject({ trial: false });

    const local = new CircuitBreaker(settings);
    for (let i = 0; i < 5; i++) call(local, 0, 'failure');
    expect(local.adoptClose('node-a')).toBeNull();
    expect(local.describe(1).state).toBe('open');
  });
});

describe('DeploymentHealth', () => {
  test('reports every transition once, skips open deployments and knows when they recover', () => {
    let now = 1_000;
    const health = new DeploymentHealth(settings, () => now);
    const seen: Array<[string, string]> = [];
    health.onTransition((id, t) => seen.push([id, t.to]));
    for (let i = 0; i < 5; i++) health.finish(health.tryPass('dep-a') as HealthPass, 'failure');
    expect(health.unavailable('dep-a')).toEqual({ reason: 'circuit_open', until: 31_000 });
    expect(health.unavailable('dep-b')).toBeNull();
    now = 31_000;
    const trial = health.tryPass('dep-a') as HealthPass;
    expect(trial.trial).toBe(true);
    expect(health.unavailable('dep-a')).toMatchObject({ reason: 'trial_in_flight' });
    health.finish(trial, 'success');
    for (let i = 0; i < 4; i++) health.finish(health.tryPass('dep-a') as HealthPass, 'success');
    expect(health.stateOf('dep-a')).toBe('closed');
    expect(seen).toEqual([['dep-a', 'open'], ['dep-a', 'half-open'], ['dep-a', 'closed']]);
  });

  test('a retry-after throttles the deployment for that long (bounded), unless the caller just honoured it', () => {
    let now = 0;
    const health = new DeploymentHealth(settings, () => now);
    health.throttle('dep-a', 2_000);
    expect(health.tryPass('dep-a')).toEqual({ reason: 'throttled', until: 2_000 });
    expect(health.tryPass('dep-a', { ignoreThrottle: true })).toMatchObject({ deploymentId: 'dep-a' });
    now = 2_000;
    expect(health.unavailable('dep-a')).toBeNull();
    health.throttle('dep-b', 10 * 3_600_000); // a hostile retry-after of ten hours
    expect(health.unavailable('dep-b')!.until).toBe(2_000 + 300_000);
  });

  test('a listener that throws does not break the caller', () => {
    const health = new DeploymentHealth(settings);
    health.onTransition(() => {
      throw new Error('journal down');
    });
    expect(() => {
      for (let i = 0; i < 5; i++) health.finish(health.tryPass('dep-a') as HealthPass, 'failure');
    }).not.toThrow();
    expect(health.stateOf('dep-a')).toBe('open');
  });
});

describe('BreakerJournal', () => {
  test('appends each transition to breaker-{deployment} in order, with reason, counts and the node', async () => {
    const appended: AppendRequest[] = [];
    let failOnce = true;
    const store = {
      append: async (request: AppendRequest) => {
        if (failOnce) {
          failOnce = false; // a concurrent writer took the version: the journal retries
          throw new Error('unique violation');
        }
        appended.push(request);
        return { nextExpectedVersion: appended.length, positions: [appended.length] };
      },
    };
    const journal = new BreakerJournal(store, 'node-1');
    journal.record('dep-a', { to: 'open', reason: 'consecutive_failures', source: 'local', counts: { failures: 5, samples: 5, consecutiveFailures: 5 }, cooldownMs: 30_000, openUntil: Date.UTC(2025, 0, 1), originNodeId: null });
    journal.record('dep-a', { to: 'half-open', source: 'local', openedForMs: 30_000 });
    journal.record('dep-a', { to: 'closed', source: 'local', trialSuccesses: 5, originNodeId: null });
    await journal.flushed();
    expect(appended.map((a) => [a.streamId, a.expectedVersion, a.events[0].type])).toEqual([
      ['breaker-dep-a', 'any', 'BreakerOpened'],
      ['breaker-dep-a', 'any', 'BreakerHalfOpened'],
      ['breaker-dep-a', 'any', 'BreakerClosed'],
    ]);
    const opened = appended[0].events[0] as { data: Extract<BreakerEvent, { type: 'BreakerOpened' }>['data']; metadata?: Record<string, unknown> };
    expect(opened.data).toEqual({
      deploymentId: 'dep-a', reason: 'consecutive_failures', source: 'local', originNodeId: 'node-1',
      counts: { failures: 5, samples: 5, consecutiveFailures: 5 }, cooldownMs: 30_000, openUntil: '2025-01-01T00:00:00.000Z',
    });
    expect(opened.metadata).toMatchObject({ nodeId: 'node-1', actor: 'system' });
  });
});
