import { RelayProjection, RelayUnavailableError } from '../../modules/relay/index.js';
import type { PublishedPage } from '../../modules/relay/relay-thread.js';
import { ALL_EVENT_TYPES, type RecordedEvent } from '../../src/kernel/index.js';

/**
 * The relay during a broker outage: the retry it refuses while backing off fails in the same words as the failure
 * that started the backoff. The projection runner warns once per distinct failure message, so anything else
 * (the words "(backing off)" appended, say) put two warning lines in the log for every retry of an outage.
 */
describe('the relay backing off', () => {
  const event = { eventId: 'e1', type: 'AttemptFinished', streamId: 'request-1', streamVersion: 1, globalPosition: 1 } as unknown as RecordedEvent;

  test('a retry during the backoff fails as the outage did, without calling the broker; the next one after it calls it', async () => {
    let calls = 0;
    const publisher = {
      async publish(): Promise<PublishedPage> {
        calls++;
        return { published: 0, failure: new RelayUnavailableError('NATS', 'connection refused') };
      },
      async close(): Promise<void> {},
    };
    const relay = new RelayProjection('nats', ALL_EVENT_TYPES, publisher);
    const first = (await relay.prepare([event]).catch((error: unknown) => error)) as Error;
    expect(first).toBeInstanceOf(RelayUnavailableError);
    const backingOff = (await relay.prepare([event]).catch((error: unknown) => error)) as Error;
    expect(backingOff).toBeInstanceOf(RelayUnavailableError);
    expect(backingOff.message).toBe(first.message);
    expect(calls).toBe(1);
    // The first backoff is half a second; then the broker is asked again.
    await new Promise((resolve) => setTimeout(resolve, 600));
    await relay.prepare([event]).catch(() => undefined);
    expect(calls).toBe(2);
  });
});

describe('a halted relay says what fixes it', () => {
  test('a refused message: the broker\'s limit or permission; anything else: the runner\'s own advice', async () => {
    const { RelayRefusedError, RelayUnserializableError } = await import('../../modules/relay/index.js');
    const relay = new RelayProjection('nats', ALL_EVENT_TYPES, { publish: async () => ({ published: 0, failure: null }), close: async () => {} });
    expect(relay.haltRemedy(new RelayRefusedError('NATS', 'e1', 'maximum payload exceeded'))).toMatch(/^on the broker: raise the limit/);
    expect(relay.haltRemedy(new RelayUnserializableError('event e1 cannot be serialized: Do not know how to serialize a BigInt'))).toBeNull();
    expect(relay.haltRemedy(new RangeError('Maximum call stack size exceeded'))).toBeNull();
  });
});
