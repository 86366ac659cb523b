import { readFileSync } from 'node:fs';
import { lastValueFrom } from 'rxjs';
import { REQUEST_EVENT_TYPES } from '../../events/index.js';
import { eventView } from '../../modules/relay/index.js';
import {
  natsCredentials,
  KAFKA_PRODUCER, KAFKA_SEND, KafkaClientProxy, RelayRefusedError, RelayUnavailableError, classifyKafkaError, kafkaRecord, natsSubject, readRelaySettings,
  relayMessage, RELAY_EVENT_FAMILIES, RELAYABLE_EVENT_TYPES,
} from '../../modules/relay/index.js';
import { pageFailure, publishPage } from '../../modules/relay/relay-page.js';
import type { RelayMessage } from '../../modules/relay/relay-message.js';
import { ALL_EVENT_TYPES, ConfigurationError } from '../../src/kernel/index.js';

/** SWITCHYARD_RELAY_URL and SWITCHYARD_RELAY_EVENTS (docs/events-out.md): what starts, and what stops the start with a clear message. */
describe('relay settings', () => {
  test('unset: no relay', () => {
    expect(readRelaySettings({})).toBeNull();
    expect(readRelaySettings({ SWITCHYARD_RELAY_URL: '  ' })).toBeNull();
  });

  test.each([
    ['http://127.0.0.1:4222', /must start with nats:\/\/, amqp:\/\/, amqps:\/\/ or kafka:\/\//],
    ['127.0.0.1:4222', /must start with/],
    ['kafka://broker', /needs a port/],
    ['amqp://a:5672,b:5672', /names one broker/],
    // The client would decode these on the relay's thread, failing every page as "unavailable" forever.
    ['nats://us%zz:s3cret@n:4222', /user or password is not percent-encoded correctly/],
    ['amqp://guest:50%@127.0.0.1:5672', /user or password is not percent-encoded correctly/],
    // Parts the transport would drop are refused, not ignored (the password never in the message).
    ['kafka://alice:s3cret@127.0.0.1:9092', /a kafka:\/\/ URL takes no user or password/],
    ['nats://127.0.0.1:4222/extra?x=1', /a nats:\/\/ URL names its servers only; the path after them would be ignored/],
    ['kafka://127.0.0.1:9092?tls=1', /a kafka:\/\/ URL names its servers only; the query after them/],
    // A password with an unencoded "/": refused without quoting any of it (the test's never-s3cret check below).
    ['nats://user:pa/s3cret@host:4222', /the user or password must be percent-encoded/],
    ['nats://a:4222,nats://b:4222', /name several servers after one scheme, comma-separated \(nats:\/\/host1:port,host2:port\)/],
  ])('%s is refused', (url, message) => {
    expect(() => readRelaySettings({ SWITCHYARD_RELAY_URL: url })).toThrow(ConfigurationError);
    expect(() => readRelaySettings({ SWITCHYARD_RELAY_URL: url })).toThrow(message);
    // The message never repeats the password.
    expect(() => readRelaySettings({ SWITCHYARD_RELAY_URL: url })).not.toThrow(/s3cret|50%/);
  });

  test('percent-encoded credentials are accepted, and given to the NATS connection decoded (the password is all after the first colon)', () => {
    expect(readRelaySettings({ SWITCHYARD_RELAY_URL: 'nats://user:p%40ss%25w0rd@n:4222' })).toMatchObject({ transport: 'nats', servers: ['n:4222'] });
    expect(natsCredentials('nats://user:p%40ss%25w0rd@n:4222')).toEqual({ user: 'user', pass: 'p@ss%w0rd' });
    expect(natsCredentials('nats://user:a:b@n1:4222,n2:4222')).toEqual({ user: 'user', pass: 'a:b' });
    expect(natsCredentials('nats://token@n:4222')).toEqual({ user: 'token', pass: '' });
    expect(natsCredentials('nats://n:4222')).toEqual({});
  });

  test('the transport comes from the scheme; servers without credentials', () => {
    expect(readRelaySettings({ SWITCHYARD_RELAY_URL: 'nats://u:p@n1:4222,n2:4222' })).toMatchObject({ transport: 'nats', servers: ['n1:4222', 'n2:4222'], events: ALL_EVENT_TYPES });
    expect(readRelaySettings({ SWITCHYARD_RELAY_URL: 'amqp://guest:guest@127.0.0.1:5672' })).toMatchObject({ transport: 'amqp', servers: ['127.0.0.1:5672'] });
    expect(readRelaySettings({ SWITCHYARD_RELAY_URL: 'kafka://k1:9092,k2:9092' })).toMatchObject({ transport: 'kafka', servers: ['k1:9092', 'k2:9092'] });
  });

  test('every event type the log can hold is nameable, in exactly one family; the docs\' table of families is the code\'s', async () => {
    const events = await import('../../events/index.js');
    const declared = Object.entries(events)
      .filter(([name, value]) => /_EVENT_TYPES$/.test(name) && !['CONTROL_PLANE_EVENT_TYPES', 'AUDITED_EVENT_TYPES'].includes(name) && Array.isArray(value))
      .flatMap(([, types]) => types as string[]);
    expect(declared.length).toBeGreaterThanOrEqual(41);
    expect([...RELAYABLE_EVENT_TYPES].sort()).toEqual([...new Set(declared)].sort());
    expect(new Set(RELAYABLE_EVENT_TYPES).size).toBe(RELAYABLE_EVENT_TYPES.length);
    const docs = readFileSync(new URL('../../../docs/events-out.md', import.meta.url), 'utf8');
    const rows = Object.entries(RELAY_EVENT_FAMILIES).map(([family, types]) => `| \`${family}\` | ${types.map((type) => `\`${type}\``).join(', ')} |`);
    for (const row of rows) expect(docs).toContain(row);
    expect(docs).toContain(`(${RELAYABLE_EVENT_TYPES.length} types;`);
    expect(readRelaySettings({ SWITCHYARD_RELAY_URL: 'nats://n:4222', SWITCHYARD_RELAY_EVENTS: 'console,ContentPolicyDefined' })!.events).toEqual(['ConsoleSignedIn', 'ConsoleSignInRefused', 'ConsoleSignedOut', 'ContentPolicyDefined']);
  });

  test('events: types and families, deduplicated; an unknown name stops the start naming it', () => {
    const settings = readRelaySettings({ SWITCHYARD_RELAY_URL: 'nats://n:4222', SWITCHYARD_RELAY_EVENTS: 'request, ApiKeyRevoked,BreakerOpened,RequestAdmitted' })!;
    expect(settings.events).toEqual([...REQUEST_EVENT_TYPES, 'ApiKeyRevoked', 'BreakerOpened']);
    expect(() => readRelaySettings({ SWITCHYARD_RELAY_URL: 'nats://n:4222', SWITCHYARD_RELAY_EVENTS: 'request,RequestAdmited,bogus' }))
      .toThrow(/SWITCHYARD_RELAY_EVENTS names "RequestAdmited", "bogus", neither an event type nor a family/);
    expect(readRelaySettings({ SWITCHYARD_RELAY_URL: 'nats://n:4222', SWITCHYARD_RELAY_EVENTS: 'all' })!.events).toBe(ALL_EVENT_TYPES);
  });
});

describe('relay mappings', () => {
  const event = {
    globalPosition: 42, transactionId: 7n, streamId: 'request-01J', streamVersion: 3, eventId: '01935c1e-0000-7000-8000-000000000001',
    type: 'AttemptFinished', schemaVersion: 2, recordedAt: new Date('2026-12-06T12:00:00Z'), data: { attempt: 1 }, metadata: { actor: 'key:1' },
  };

  test('a page: each stream in order, a stream stops at its failure, and a refusal is what the page is acted on by', async () => {
    const message = (streamId: string, eventId: string) => ({ streamId, eventId }) as unknown as RelayMessage;
    const page = [message('a', 'a1'), message('b', 'b1'), message('a', 'a2'), message('c', 'c1'), message('b', 'b2'), message('a', 'a3')];
    const sent: string[] = [];
    const outcome = await publishPage({
      async publishEvent({ eventId }: RelayMessage) {
        // Stream b's broker is away; stream a's second event is too large; c goes through.
        if (eventId === 'b1') throw new RelayUnavailableError('NATS', 'connection closed');
        if (eventId === 'a2') throw new RelayRefusedError('NATS', eventId, 'maximum payload exceeded');
        sent.push(eventId);
      },
    }, page);
    expect(sent).toEqual(['a1', 'c1']);
    expect(outcome.published).toBe(2);
    expect(outcome.failures).toHaveLength(2);
    // The refusal wins over the outage listed before it: the relay must stop at a2, not back off and retry forever.
    expect(pageFailure(outcome.failures, 'NATS')).toMatchObject({ name: 'RelayRefusedError', eventId: 'a2' });
    expect(pageFailure([], 'NATS')).toBeNull();
    expect(pageFailure([new RelayUnavailableError('NATS', 'timeout')], 'NATS')).toMatchObject({ name: 'RelayUnavailableError', reason: 'timeout' });
    // Anything else a client throws is read as the broker being unavailable, with its message as the reason.
    expect(pageFailure([new TypeError('socket hang up'), 'odd'], 'RabbitMQ')).toMatchObject({ name: 'RelayUnavailableError', transport: 'RabbitMQ', reason: 'socket hang up' });
    expect(pageFailure(['odd'], 'RabbitMQ')).toMatchObject({ reason: 'odd' });
    // amqp-connection-manager rejects with {err, url}: the error's words, never the URL (it may hold the password).
    const rejected = pageFailure([{ err: new Error('ACCESS_REFUSED - Login was refused'), url: 'amqp://guest:s3cret@h:5672' }], 'RabbitMQ');
    expect(rejected).toMatchObject({ reason: 'ACCESS_REFUSED - Login was refused' });
    expect(rejected?.message).not.toContain('s3cret');
    expect(pageFailure([{ code: 7 }], 'RabbitMQ')?.reason).toBe('an unexplained failure (Object without a message)');
  });

  test('the body is the event view of GET /admin/v1/events, in its field order', () => {
    const message = relayMessage(eventView(event as never));
    expect(JSON.parse(message.body)).toEqual({
      globalPosition: 42, streamId: 'request-01J', streamVersion: 3, eventId: event.eventId, type: 'AttemptFinished', schemaVersion: 2,
      recordedAt: '2026-12-06T12:00:00.000Z', data: { attempt: 1 }, metadata: { actor: 'key:1' },
    });
    expect(Object.keys(JSON.parse(message.body))).toEqual(['globalPosition', 'streamId', 'streamVersion', 'eventId', 'type', 'schemaVersion', 'recordedAt', 'data', 'metadata']);
    expect(natsSubject(message)).toBe('switchyard.events.AttemptFinished');
  });

  test('an event that crossed to the relay\'s thread (a structured clone) serializes to the same bytes as the history API\'s', () => {
    // JSON from the log can hold a key named __proto__ (an own property, as JSON.parse makes it): it must cross as one.
    const data = { z: 1, a: { y: [1, { b: null, a: 'ü\u2028"' }], x: -0 }, m: '', ...JSON.parse('{"__proto__":{"polluted":true},"constructor":"c"}') };
    // As the store reads it: the stored form beside the payload (the same object when nothing was upcast).
    const recorded = { ...event, data, metadata: { b: 2, a: 1 }, stored: { schemaVersion: 2, data, recordedAt: '2026-12-06T12:00:00.000000Z' } };
    const body = relayMessage(eventView(structuredClone(recorded) as never)).body;
    expect(body).toBe(JSON.stringify(eventView(recorded as never)));
    expect(body).toContain('"__proto__":{"polluted":true}');
  });

  test('Kafka: key = stream id (one partition per stream, in order), the envelope as value, type and id in headers; idempotent producer, acks from all replicas', () => {
    const message = relayMessage(eventView(event as never));
    expect(kafkaRecord(message)).toEqual({
      key: 'request-01J',
      value: message.body,
      headers: { 'switchyard-event-id': event.eventId, 'switchyard-event-type': 'AttemptFinished', 'content-type': 'application/json' },
    });
    expect(KAFKA_PRODUCER).toMatchObject({ idempotent: true, maxInFlightRequests: 1 });
    expect(KAFKA_SEND).toEqual({ acks: -1 });
  });

  test('Kafka: a refusal (too large, not authorized) stops the relay; anything else is retried', () => {
    const tooLarge = Object.assign(new Error('The request included a message larger than the max message size the server will accept'), { type: 'MESSAGE_TOO_LARGE' });
    expect(classifyKafkaError({ eventId: 'e1' }, tooLarge)).toBeInstanceOf(RelayRefusedError);
    expect(classifyKafkaError({ eventId: 'e1' }, Object.assign(new Error('Not authorized'), { type: 'TOPIC_AUTHORIZATION_FAILED' }))).toBeInstanceOf(RelayRefusedError);
    expect(classifyKafkaError({ eventId: 'e1' }, Object.assign(new Error('leader'), { type: 'LEADER_NOT_AVAILABLE' }))).toBeInstanceOf(RelayUnavailableError);
    expect(classifyKafkaError({ eventId: 'e1' }, new Error('Connection error: ECONNREFUSED'))).toBeInstanceOf(RelayUnavailableError);
  });

  test('Kafka: the Nest client proxy with no broker listening fails the publish as unavailable (the relay backs off), never as a refusal', async () => {
    // Port 9 (discard) on the loopback: nothing listens; kafkajs gives up after its retries.
    const client = new KafkaClientProxy(['127.0.0.1:9'], 1_000, 0);
    const message = relayMessage(eventView(event as never));
    const failure = await lastValueFrom(client.emit(message.type, message), { defaultValue: undefined }).then(() => null, (error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(RelayRefusedError);
    await client.close().catch(() => undefined);
  }, 30_000);
});
