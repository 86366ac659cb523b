import { ProviderError } from '../../modules/canonical/provider-error.js';
import { DeploymentGate, isRefusal, type GateLease } from '../../modules/inference/resilience/deployment-gate.js';
import { DeploymentHealth } from '../../modules/inference/resilience/deployment-health.js';
import { DEFAULT_RESILIENCE } from '../../modules/inference/resilience/resilience-settings.js';
import { DeploymentConcurrency } from '../../modules/limits/deployment-concurrency.js';
import { testDeployment } from '../support/routing-fixtures.js';

describe('the deployment gate: breaker pass, concurrency slot and throttle as one lease', () => {
  let now = 1_000_000;
  const clock = () => now;
  const make = (breaker = {}) => {
    const health = new DeploymentHealth({ ...DEFAULT_RESILIENCE.breaker, ...breaker }, clock);
    const load = new DeploymentConcurrency();
    return { health, load, gate: new DeploymentGate(health, load) };
  };
  const limited = testDeployment('d', { limits: { rpm: null, tpm: null, maxConcurrency: 2 } });

  test('a saturated deployment is refused until a lease is left; leaving twice frees one slot only', async () => {
    const { gate, load } = make();
    const first = (await gate.enter(limited)) as GateLease;
    const second = (await gate.enter(limited)) as GateLease;
    expect(await gate.enter(limited)).toEqual({ refused: 'saturated', until: null });
    first.leave('success', null);
    first.leave('success', null);
    expect(load.total).toBe(1);
    expect(isRefusal(await gate.enter(limited))).toBe(false);
    second.leave('neutral', null);
  });

  test('an open breaker refuses with the time it reopens, and the refused call takes no slot', async () => {
    const { gate, load } = make({ consecutiveFailures: 1 });
    ((await gate.enter(limited)) as GateLease).leave('failure', null);
    const refusal = await gate.enter(limited);
    expect(refusal).toMatchObject({ refused: 'circuit_open', until: now + DEFAULT_RESILIENCE.breaker.cooldownMs });
    expect(load.total).toBe(0);
    expect(gate.recoversAt('d')).toBe(now + DEFAULT_RESILIENCE.breaker.cooldownMs);
  });

  test("a provider's retry-after throttles the deployment, except for the caller that waited it out", async () => {
    const { gate } = make();
    ((await gate.enter(limited)) as GateLease).leave('neutral', new ProviderError('rate_limited', 'slow down', 429, 2_000));
    // Held back by a 429's retry-after: `rate_limited` (an overload's would be `throttled`).
    expect(await gate.enter(limited)).toEqual({ refused: 'rate_limited', until: now + 2_000 });
    const retried = await gate.enter(limited, true);
    expect(isRefusal(retried)).toBe(false);
    (retried as GateLease).leave('success', null);
    now += 2_001;
    expect(isRefusal(await gate.enter(limited))).toBe(false);
  });
});
