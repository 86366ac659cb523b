import { type MsgHdrsImpl, headers as natsHeaders } from '@nats-io/transport-node';
import { plainPubAck } from '../../modules/relay/jetstream-acks.js';
import { RelayHeaders } from '../../modules/relay/jetstream-client.js';
import { type RelayMessage } from '../../modules/relay/relay-message.js';

/**
 * The relay's JetStream publish without the library's general paths (modules/relay/): its headers encoded as the
 * library encodes them, and the usual PubAck read from its bytes — what it reads must be what JSON.parse reads,
 * and whatever it does not recognize must be left to JSON.parse (null), never guessed at.
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

const bytes = (text: string) => new TextEncoder().encode(text);

/** What the tracker's JSON path answers for a PubAck without an error. */
const parsed = (text: string) => {
  const answer = JSON.parse(text) as { duplicate?: boolean };
  answer.duplicate ??= false;
  return answer;
};

describe('the PubAck read from its bytes', () => {
  test.each([
    '{"stream":"SWITCHYARD","seq":1}',
    '{"stream":"SWITCHYARD","seq":0}',
    '{"stream":"SWITCHYARD","seq":987654321012345}',
    '{"stream":"SWITCHYARD","seq":42,"duplicate":true}',
    '{"stream":"ops-relay_2.events","seq":7}',
    '{"stream":"A B","seq":7,"duplicate":true}',
    // As nats-server writes them: up to 2.11 with a space before "seq", and every version with one before true.
    '{"stream":"SWITCHYARD", "seq":1}',
    '{"stream":"SWITCHYARD", "seq":1,"duplicate": true}',
    '{"stream":"SWITCHYARD","seq":1,"duplicate": true}',
  ])('%s reads as JSON.parse reads it', (text) => {
    expect(plainPubAck(bytes(text))).toEqual(parsed(text));
  });

  test.each([
    ['an error', '{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"},"stream":"SWITCHYARD","seq":0}'],
    ['an error after the fields', '{"stream":"SWITCHYARD","seq":0,"error":{"code":400,"err_code":10060,"description":"expected stream does not match"}}'],
    ['a domain', '{"stream":"SWITCHYARD","domain":"hub","seq":5}'],
    ['the fields in another order', '{"seq":5,"stream":"SWITCHYARD"}'],
    ['duplicate false written out', '{"stream":"SWITCHYARD","seq":5,"duplicate":false}'],
    ['another field after seq', '{"stream":"SWITCHYARD","seq":5,"batch":"b1"}'],
    ['spaces', '{"stream": "SWITCHYARD", "seq": 5}'],
    ['a space after seq', '{"stream":"SWITCHYARD", "seq": 5}'],
    ['two spaces after the comma', '{"stream":"SWITCHYARD",  "seq":5}'],
    ['a space before the comma', '{"stream":"SWITCHYARD" ,"seq":5}'],
    ['two spaces before true', '{"stream":"SWITCHYARD","seq":5,"duplicate":  true}'],
    ['duplicate true cut short', '{"stream":"SWITCHYARD","seq":5,"duplicate": tru}'],
    ['duplicate with more after it', '{"stream":"SWITCHYARD","seq":5,"duplicate": true,"x":1}'],
    ['a trailing newline', '{"stream":"SWITCHYARD","seq":5}\n'],
    ['an escape in the name', '{"stream":"SWITCH\\"YARD","seq":5}'],
    ['a non-ASCII name', '{"stream":"SWITCHYÄRD","seq":5}'],
    ['an empty name', '{"stream":"","seq":5}'],
    ['a leading zero', '{"stream":"SWITCHYARD","seq":05}'],
    ['a negative sequence', '{"stream":"SWITCHYARD","seq":-5}'],
    ['a fraction', '{"stream":"SWITCHYARD","seq":5.5}'],
    ['sixteen digits', '{"stream":"SWITCHYARD","seq":9007199254740993}'],
    ['no sequence', '{"stream":"SWITCHYARD"}'],
    ['cut short', '{"stream":"SWITCHYARD","seq":5'],
    ['cut in the name', '{"stream":"SWITCHY'],
    ['not JSON', 'nope'],
    ['nothing', ''],
  ])('%s is left to JSON.parse', (_case, text) => {
    expect(plainPubAck(bytes(text))).toBeNull();
  });
});
