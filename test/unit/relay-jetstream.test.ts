import { type MsgHdrsImpl, headers as natsHeaders } from '@nats-io/transport-node';
import { RelayHeaders } from '../../modules/relay/jetstream-client.js';
import { type RelayMessage } from '../../modules/relay/relay-message.js';

/**
 * The relay's JetStream publish without the library's general paths (modules/relay/): its headers encoded as the
 * library encodes them.
 */
describe('the relay headers', () => {
  const message = (streamId: string): RelayMessage => ({ eventId: '0193a6f2-5d1c-7a3e-9b2f-4c8d1e6f7a90', type: 'AttemptFinished', streamId, globalPosition: 7, body: '{}' });

  /** The headers as the library's `set` builds them. */
  function libraryHeaders(of: RelayMessage) {
    const headers = natsHeaders() as MsgHdrsImpl; // what headers() makes, with its encode
    headers.set('Nats-Msg-Id', of.eventId);
    headers.set('Switchyard-Event-Type', of.type);
    headers.set('Switchyard-Stream-Id', of.streamId);
    headers.set('Content-Type', 'application/json');
    return headers;
  }

  test.each(['request-0193a6f2-5d1c-7a3e-9b2f-4c8d1e6f7a90', 'alias-chat', ' alias-padded ', 'alias-ümlaut'])('stream %j: the same bytes and the same answers as the library headers', (streamId) => {
    const ours = new RelayHeaders(message(streamId));
    const theirs = libraryHeaders(message(streamId));
    expect(Buffer.from(ours.encode()).toString('hex')).toBe(Buffer.from(theirs.encode()).toString('hex'));
    expect(ours.get('Nats-Msg-Id')).toBe(theirs.get('Nats-Msg-Id'));
    expect(ours.get('Switchyard-Stream-Id')).toBe(theirs.get('Switchyard-Stream-Id'));
    expect(ours.keys()).toEqual(theirs.keys());
  });

  test('a value with a line break is refused, as the library refuses it', () => {
    for (const streamId of ['alias-a\r\nInjected: yes', 'alias-a\nInjected: yes']) {
      expect(() => libraryHeaders(message(streamId))).toThrow(/cannot contain/);
      expect(() => new RelayHeaders(message(streamId))).toThrow(/cannot contain/);
    }
  });
});
