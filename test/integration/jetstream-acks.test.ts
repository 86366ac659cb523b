import { JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { type NatsConnection, PermissionViolationError, connect, headers as natsHeaders } from '@nats-io/transport-node';
import { JetStreamAcks, PubAckMissingError, plainPubAck } from '../../modules/relay/jetstream-acks.js';
import { uuidv7 } from '../../src/kernel/ids.js';
import { OwnNats, natsServerAvailable } from '../support/own-nats.js';

/**
 * The relay's PubAck tracker (modules/relay/jetstream-acks.ts) against the live NATS JetStream on 4222, on a
 * stream of the suite's own: what `js.publish` answers, it answers — the PubAck, a duplicate, the stream's refusal —
 * and what never comes back (no stream on the subject, a listener that never answers, a closed tracker) fails the
 * publish instead of leaving it waiting.
 */
const run = uuidv7().slice(-8).replace(/-/g, '');
const STREAM = `SYTEST_ACKS_${run}`;
const SUBJECT = `sytest.acks.${run}`;

let connection: NatsConnection;

beforeAll(async () => {
  connection = await connect({ servers: '127.0.0.1:4222', noAsyncTraces: true });
  const manager = await jetstreamManager(connection);
  await manager.streams.add({ name: STREAM, subjects: [`${SUBJECT}.>`] });
});

afterAll(async () => {
  const manager = await jetstreamManager(connection);
  await manager.streams.delete(STREAM).catch(() => undefined);
  await connection.close();
});

function withId(id: string, more: Record<string, string> = {}) {
  const headers = natsHeaders();
  headers.set('Nats-Msg-Id', id);
  for (const [name, value] of Object.entries(more)) headers.set(name, value);
  return headers;
}

test('a thousand publishes in flight each get their own PubAck, in the order they were sent; a resent id is a duplicate', async () => {
  const acks = new JetStreamAcks(connection, 5_000);
  try {
    const ids = Array.from({ length: 1_000 }, (_, i) => `${run}-${i}`);
    const answers = await Promise.all(ids.map((id, i) => acks.publish(`${SUBJECT}.Event${i % 7}`, JSON.stringify({ i }), withId(id))));
    expect(answers.every((answer) => answer.stream === STREAM && answer.duplicate === false)).toBe(true);
    const sequences = answers.map((answer) => answer.seq);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(1_000);
    const again = await acks.publish(`${SUBJECT}.Event0`, '{}', withId(ids[10]));
    expect(again).toMatchObject({ stream: STREAM, duplicate: true, seq: answers[10].seq });
  } finally {
    acks.close();
  }
});

test('what this server answers for a stored and for a de-duplicated publish is read from its bytes, not left to JSON.parse', async () => {
  // A core request with the relay's headers: the answer's bytes as the server wrote them (its version's spacing).
  const stored = await connection.request(`${SUBJECT}.Raw`, '{}', { headers: withId(`${run}-raw`), timeout: 5_000 });
  const duplicate = await connection.request(`${SUBJECT}.Raw`, '{}', { headers: withId(`${run}-raw`), timeout: 5_000 });
  const storedAck = plainPubAck(stored.data);
  expect(storedAck).toEqual({ ...(JSON.parse(stored.string()) as object), duplicate: false });
  expect(plainPubAck(duplicate.data)).toEqual({ stream: STREAM, seq: storedAck!.seq, duplicate: true });
});

test('the stream refusing a message rejects that publish with its JetStream API error, and the next is answered', async () => {
  const acks = new JetStreamAcks(connection, 5_000);
  try {
    const refused = acks.publish(`${SUBJECT}.Refused`, '{}', withId(`${run}-refused`, { 'Nats-Expected-Stream': 'NOT_THIS_ONE' }));
    await expect(refused).rejects.toBeInstanceOf(JetStreamApiError);
    await expect(refused).rejects.toMatchObject({ status: 400 });
    await expect(acks.publish(`${SUBJECT}.After`, '{}', withId(`${run}-after`))).resolves.toMatchObject({ stream: STREAM, duplicate: false });
  } finally {
    acks.close();
  }
});

test('no stream on the subject fails at once (no responders), not after the timeout', async () => {
  const acks = new JetStreamAcks(connection, 30_000);
  try {
    const started = Date.now();
    await expect(acks.publish(`sytest.nostream.${run}`, '{}', withId(`${run}-nostream`))).rejects.toThrow(PubAckMissingError);
    expect(Date.now() - started).toBeLessThan(5_000);
  } finally {
    acks.close();
  }
});

test('a listener that never answers: the publish fails with the timeout; closing fails what is still waiting', async () => {
  const silent = connection.subscribe(`sytest.silent.${run}`); // a responder that never replies: no 503 comes back
  const acks = new JetStreamAcks(connection, 300);
  try {
    await expect(acks.publish(`sytest.silent.${run}`, '{}', withId(`${run}-silent`))).rejects.toThrow(/no acknowledgement within 300 ms/);
    const patient = new JetStreamAcks(connection, 60_000);
    const waiting = patient.publish(`sytest.silent.${run}`, '{}', withId(`${run}-silent-2`));
    patient.close('closed by the test');
    await expect(waiting).rejects.toThrow(/closed by the test/);
  } finally {
    acks.close();
    silent.unsubscribe();
  }
});

/** A server of the suite's own whose users may not do everything: what it refuses fails the publish at once, as a refusal. */
(natsServerAvailable() ? describe : describe.skip)('refusals by the server (permissions)', () => {
  let own: OwnNats;

  beforeAll(async () => {
    own = await OwnNats.start({
      authorization: `users = [
        { user: relay, password: relay-pw, permissions: { publish: { allow: [">"], deny: ["sytest.acks.forbidden.>"] }, subscribe: { allow: [">"] } } }
        { user: noinbox, password: noinbox-pw, permissions: { publish: { allow: [">"] }, subscribe: { deny: ["_INBOX.>"] } } }
      ]`,
    });
    const admin = await connect({ servers: own.url, user: 'relay', pass: 'relay-pw' });
    await (await jetstreamManager(admin)).streams.add({ name: 'SYTEST_OWN', subjects: ['sytest.acks.>'] });
    await admin.close();
  }, 30_000);

  afterAll(async () => {
    await own?.close();
  });

  test('a publish the server forbids fails with its permissions violation, not after the timeout; the next one is answered', async () => {
    const relay = await connect({ servers: own.url, user: 'relay', pass: 'relay-pw', noAsyncTraces: true });
    const acks = new JetStreamAcks(relay, 30_000);
    try {
      const started = Date.now();
      const refused = acks.publish('sytest.acks.forbidden.One', '{}', withId(`${run}-forbidden`));
      await expect(refused).rejects.toBeInstanceOf(PermissionViolationError);
      await expect(refused).rejects.toMatchObject({ operation: 'publish', subject: 'sytest.acks.forbidden.One' });
      expect(Date.now() - started).toBeLessThan(5_000);
      await expect(acks.publish('sytest.acks.allowed.One', '{}', withId(`${run}-allowed`))).resolves.toMatchObject({ stream: 'SYTEST_OWN' });
      expect(acks.closed).toBe(false);
    } finally {
      acks.close();
      await relay.close();
    }
  });

  test('a reply subscription the server refuses fails what waits and every later publish at once (its owner makes a new one)', async () => {
    const connection = await connect({ servers: own.url, user: 'noinbox', pass: 'noinbox-pw', noAsyncTraces: true });
    const acks = new JetStreamAcks(connection, 30_000);
    try {
      await expect(acks.publish('sytest.acks.any.One', '{}', withId(`${run}-noinbox`))).rejects.toBeInstanceOf(PermissionViolationError);
      expect(acks.closed).toBe(true);
      await expect(acks.publish('sytest.acks.any.Two', '{}', withId(`${run}-noinbox-2`))).rejects.toMatchObject({ operation: 'subscription' });
    } finally {
      acks.close();
      await connection.close();
    }
  });
});
