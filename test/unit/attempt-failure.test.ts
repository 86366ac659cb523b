import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { attemptFailure } from '../../modules/inference/pipeline/attempt-failure.js';
import { GatewayFault } from '../../modules/inference/pipeline/gateway-fault.js';
import { DeadlineExceeded } from '../../modules/inference/resilience/deadlines.js';
import { healthSignal } from '../../modules/inference/resilience/health-signal.js';

const live = () => new AbortController().signal;

describe('whose failure an attempt exception is', () => {
  test('what an adapter classified is the provider side, and feeds health as before', () => {
    const transient = new ProviderError('transient', 'provider returned 500', 500);
    expect(attemptFailure(transient, live())).toBe(transient);
    expect(healthSignal('failed', transient)).toBe('failure');
  });

  test('the abort reason (a deadline, a disconnect) wins over what the aborted call threw', () => {
    const controller = new AbortController();
    const deadline = new DeadlineExceeded('ttft');
    controller.abort(deadline);
    expect(attemptFailure(new TypeError('terminated'), controller.signal)).toBe(deadline);
  });

  test('a stack overflow while building the upstream request is the gateway’s own 500', () => {
    let overflow: unknown;
    try {
      const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)) as unknown;
      JSON.stringify(deep);
    } catch (error) {
      overflow = error;
    }
    expect(overflow).toBeInstanceOf(RangeError);
    const failure = attemptFailure(overflow, live());
    expect(failure).toBeInstanceOf(GatewayFault);
    expect((failure as GatewayFault).error).toMatchObject({ status: 500, code: 'internal_error' });
    expect((failure as GatewayFault).isOurs).toBe(true);
    expect((failure as GatewayFault).describeCause()).toContain('RangeError');
  });

  test('a GatewayError raised about the request is the caller’s 4xx, not a provider failure', () => {
    const refusal = new GatewayError(400, 'invalid_request', 'the request cannot be sent', 'tools');
    const failure = attemptFailure(refusal, live());
    expect(failure).toBeInstanceOf(GatewayFault);
    expect((failure as GatewayFault).error).toBe(refusal);
    expect((failure as GatewayFault).isOurs).toBe(false);
  });
});
