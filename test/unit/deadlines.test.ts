import { ProviderError } from '../../modules/canonical/provider-error.js';
import { DEADLINE_CODES, DeadlineExceeded, armDeadline, deadlineOf } from '../../modules/inference/resilience/deadlines.js';
import { AbortScope } from '../../src/kernel/index.js';

describe('deadlines', () => {
  test('each deadline has its own client-facing code', () => {
    expect(new Set(Object.values(DEADLINE_CODES)).size).toBe(Object.keys(DEADLINE_CODES).length);
  });

  test('the gateway\'s own deadlines are timeouts for routing, except a slow reader, which is a cancellation', () => {
    for (const deadline of ['ttft', 'idle', 'stream', 'request'] as const) {
      const error = new DeadlineExceeded(deadline);
      expect([error.errorClass, error.fallbackable, deadlineOf(error)]).toEqual(['timeout', true, deadline]);
    }
    const slow = new DeadlineExceeded('write_progress');
    expect([slow.errorClass, slow.fallbackable, deadlineOf(slow)]).toEqual(['cancelled', false, 'write_progress']);
  });

  test('a status-less timeout from an adapter is the connect deadline; a 408/504 from the provider is no gateway deadline', () => {
    expect(deadlineOf(new ProviderError('timeout', 'timed out connecting to the provider'))).toBe('connect');
    expect(deadlineOf(new ProviderError('timeout', 'provider returned 504', 504))).toBeNull();
    expect(deadlineOf(new ProviderError('transient', 'provider returned 500', 500))).toBeNull();
    expect(deadlineOf(null)).toBeNull();
  });

  test('an armed deadline aborts its scope with its own error; one cleared in time never fires', async () => {
    const late = new AbortScope();
    const onTime = new AbortScope();
    armDeadline(late, 'ttft', 1);
    clearTimeout(armDeadline(onTime, 'idle', 1));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(late.signal.reason).toBeInstanceOf(DeadlineExceeded);
    expect(deadlineOf(late.signal.reason as DeadlineExceeded)).toBe('ttft');
    expect(onTime.signal.aborted).toBe(false);
  });
});
