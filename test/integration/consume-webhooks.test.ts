import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import amqp from 'amqplib';
import { connect as connectNats, type NatsConnection } from '@nats-io/transport-node';
import { NATS_DEAD_LETTER_STREAM, type WebhookDeadLetter } from '../../modules/consumers/index.js';
import { eventView } from '../../modules/relay/index.js';
import { RABBITMQ_EXCHANGE, natsSubject, relayMessage } from '../../modules/relay/index.js';
import type { RecordedEvent } from '../../src/kernel/index.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import { MAIN, runCli } from '../support/cli-process.js';
import { OwnNats } from '../support/own-nats.js';

const SECRET = 'webhook-hmac-key-for-the-suite-0123456789';
const SHARED_RABBITMQ = 'amqp://guest:guest@127.0.0.1:5672';

interface Received {
  delivery: string;
  type: string;
  signature: string;
  body: string;
  answered: number;
}

/** An HTTP receiver of the test's own: answers 503 to the first `failures` POSTs of each delivery id, then `then`. */
async function receiver(failures: number, then: number): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const seen = new Map<string, number>();
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const delivery = String(request.headers['x-switchyard-delivery']);
      const count = (seen.get(delivery) ?? 0) + 1;
      seen.set(delivery, count);
      const answered = count <= failures ? 503 : then;
      received.push({ delivery, type: String(request.headers['x-switchyard-event-type']), signature: String(request.headers['x-switchyard-signature']), body, answered });
      response.writeHead(answered).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

function event(type: string): RecordedEvent {
  return {
    eventId: randomUUID(), type, streamId: `tenant-acme`, streamVersion: 1, globalPosition: 1, transactionId: 1n, schemaVersion: 1,
    recordedAt: new Date(), data: { tenantId: 'acme', note: `a ${type}` }, metadata: {} as RecordedEvent['metadata'],
  };
}

/**
 * `switchyard consume webhooks` on a NATS JetStream server of the suite's own, events published as the relay
 * publishes them: a receiver that fails twice per delivery and then recovers gets each selected event
 * accepted once, signed, under its event id; a receiver that never recovers leaves a dead letter per event
 * (without its URL's path); a loopback URL without SWITCHYARD_WEBHOOK_ALLOW_PRIVATE_NETWORK is never called.
 */
describe('switchyard consume webhooks', () => {
  let nats: OwnNats;
  let client: NatsConnection;
  const children: ChildProcess[] = [];
  const servers: Server[] = [];

  beforeAll(async () => {
    nats = await OwnNats.start();
    client = await connectNats({ servers: nats.url });
  });
  /** `switchyard consume webhooks` as a process of its own, signing with the suite's key; answers its output so far. */
  function consumeWebhooks(env: Record<string, string>): () => string {
    const child = spawn(process.execPath, [MAIN, 'consume', 'webhooks'], {
      env: { ...process.env, WEBHOOK_KEY: SECRET, SWITCHYARD_WEBHOOK_SECRET: 'env:WEBHOOK_KEY', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    return () => output;
  }

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const server of servers) server.close();
    await client?.close();
    await nats?.close();
  });

  test('without URLs or with an unknown event name it says why and exits', async () => {
    const base = { ...process.env, SWITCHYARD_RELAY_URL: nats.url, WEBHOOK_KEY: SECRET, SWITCHYARD_WEBHOOK_SECRET: 'env:WEBHOOK_KEY' };
    // The first as a process of its own; meanwhile the second in this process (cli-in-process.ts: the same code,
    // refusing before it connects to anything, without a process's seconds of start-up).
    const [noUrls, unknown] = await Promise.all([
      runCli(['consume', 'webhooks'], { ...base, SWITCHYARD_WEBHOOK_URLS: '' }),
      runCliInProcess(['consume', 'webhooks'], { ...base, LOG_LEVEL: 'error', SWITCHYARD_WEBHOOK_URLS: 'http://127.0.0.1:9/x', SWITCHYARD_WEBHOOK_EVENTS: 'Nonsense' }),
    ]);
    expect([noUrls.code, noUrls.stderr]).toEqual([1, expect.stringContaining('needs SWITCHYARD_WEBHOOK_URLS')]);
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining('SWITCHYARD_WEBHOOK_EVENTS names "Nonsense"')]);
    // A secret that cannot be read names the setting and the reference, and why a natural name is refused;
    // a value that is not a reference (it may be the key itself) is never repeated.
    const urls = { ...base, LOG_LEVEL: 'error', SWITCHYARD_WEBHOOK_URLS: 'http://127.0.0.1:9/x' };
    const unlisted = await runCliInProcess(['consume', 'webhooks'], { ...urls, WEBHOOK_SECRET: SECRET, SWITCHYARD_WEBHOOK_SECRET: 'env:WEBHOOK_SECRET' });
    expect(unlisted.code).toBe(1);
    expect(unlisted.stderr).toContain('SWITCHYARD_WEBHOOK_SECRET env:WEBHOOK_SECRET: it is not set, or SWITCHYARD_SECRET_ENV does not allow it; by default only names ending in _KEY');
    const literal = await runCliInProcess(['consume', 'webhooks'], { ...urls, SWITCHYARD_WEBHOOK_SECRET: 'the-signing-key-itself' });
    expect(literal.code).toBe(1);
    expect(literal.stderr).toContain('SWITCHYARD_WEBHOOK_SECRET: not a secret reference (use env:NAME or file:PATH)');
    expect(literal.stderr).not.toContain('the-signing-key-itself');
    // No broker where the URL points: which broker, from which setting, and the socket's reason.
    const unreachable = await runCliInProcess(['consume', 'webhooks'], { ...urls, SWITCHYARD_RELAY_URL: 'nats://127.0.0.1:9' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/cannot reach the NATS broker at 127\.0\.0\.1:9 \(SWITCHYARD_RELAY_URL\): \S/);
  }, 60_000);

  test('retries until the target recovers: each event accepted once per delivery id, signed; a dead target leaves dead letters; the policy refuses loopback unless allowed', async () => {
    const recovering = await receiver(2, 200);
    const dead = await receiver(0, 500);
    const refused = await receiver(0, 200);
    servers.push(recovering.server, dead.server, refused.server);
    const start = (group: string, urls: string[], allowPrivate: boolean) => consumeWebhooks({
      SWITCHYARD_RELAY_URL: nats.url, SWITCHYARD_CONSUME_GROUP: group, SWITCHYARD_WEBHOOK_URLS: urls.join(','),
      SWITCHYARD_WEBHOOK_ALLOW_PRIVATE_NETWORK: String(allowPrivate), SWITCHYARD_WEBHOOK_ATTEMPTS: '3', SWITCHYARD_WEBHOOK_BACKOFF_MS: '50',
    });
    const hooks = start('hooks', [recovering.url, `${dead.url}/hook/path-token-s3cr3t`], true);
    const guarded = start('guarded', [refused.url], false);
    const published = [event('BudgetThresholdCrossed'), event('ApiKeyRevoked'), event('BreakerOpened'), event('AttemptFinished'), event('ApiKeyIssued')];
    // The stream and the durables exist once the consumers listen (the relay would create the stream too).
    for (const begun = Date.now(); !(hooks().includes('consuming JetStream') && guarded().includes('consuming JetStream'));) {
      if (Date.now() - begun > 30_000) throw new Error(`consumers did not start: ${hooks()}\n---\n${guarded()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const js = jetstream(client);
    for (const e of published) {
      const message = relayMessage(eventView(e));
      await js.publish(natsSubject(message), message.body, { msgID: message.eventId });
    }
    const selected = published.slice(0, 3);
    const manager = await jetstreamManager(client);
    const deadLetters = async () => {
      const info = await manager.streams.info(NATS_DEAD_LETTER_STREAM).catch(() => null);
      return info?.state.messages ?? 0;
    };
    // 3 dead letters of the dead target, 3 of the refused one.
    for (const begun = Date.now(); recovering.received.filter((r) => r.answered === 200).length < 3 || (await deadLetters()) < 6;) {
      if (Date.now() - begun > 60_000) throw new Error(`not delivered: ${hooks()}\n---\n${guarded()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // The recovering target: every selected event, three POSTs each (two 503s, then accepted), one accepted per delivery id.
    const accepted = recovering.received.filter((r) => r.answered === 200);
    expect(accepted.map((r) => r.delivery).sort()).toEqual(selected.map((e) => e.eventId).sort());
    expect(recovering.received.length).toBe(9);
    for (const e of selected) {
      const posts = recovering.received.filter((r) => r.delivery === e.eventId);
      expect(posts.map((r) => r.answered)).toEqual([503, 503, 200]);
      for (const post of posts) {
        expect(post.type).toBe(e.type);
        expect(post.body).toBe(relayMessage(eventView(e)).body);
        const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(post.signature)!;
        expect(v1).toBe(createHmac('sha256', SECRET).update(`${t}.${post.body}`).digest('hex'));
      }
    }
    // AttemptFinished and ApiKeyIssued are not selected by default.
    expect(recovering.received.some((r) => r.type === 'AttemptFinished' || r.type === 'ApiKeyIssued')).toBe(false);
    // The policy: a loopback URL without SWITCHYARD_WEBHOOK_ALLOW_PRIVATE_NETWORK is never connected to.
    expect(refused.received).toEqual([]);
    expect(dead.received.length).toBe(9);

    // Dead letters: one per event and failing URL, de-duplicable by `<event id>:<url index>`, without the URL's path.
    const letters: WebhookDeadLetter[] = [];
    const stored = await js.consumers.get(NATS_DEAD_LETTER_STREAM);
    for (let i = 0; i < 6; i++) letters.push((await stored.next({ expires: 5_000 }))!.json<WebhookDeadLetter>());
    const fromDead = letters.filter((l) => l.target.origin === dead.url);
    expect(fromDead.map((l) => l.eventId).sort()).toEqual(selected.map((e) => e.eventId).sort());
    for (const letter of fromDead) expect([letter.target.index, letter.attempts, letter.lastStatus, letter.event.eventId]).toEqual([1, 3, 500, letter.eventId]);
    expect(fromDead.map((l) => l.group)).toEqual(['hooks', 'hooks', 'hooks']);
    const fromRefused = letters.filter((l) => l.target.origin === refused.url);
    expect(fromRefused.map((l) => [l.attempts, l.lastError])).toEqual(selected.map(() => [1, 'refused by the outbound address policy']));
    expect(JSON.stringify(letters)).not.toContain('path-token-s3cr3t');
    expect(hooks() + guarded()).not.toContain('path-token-s3cr3t');
    expect(hooks() + guarded()).not.toContain(SECRET);
  }, 90_000);
  test('a dead receiver holds neither the healthy one nor later events back; two groups\' dead letters for the same event are both kept', async () => {
    const dead = await receiver(0, 500);
    const healthy = await receiver(0, 200);
    servers.push(dead.server, healthy.server);
    const outputs = ['slow-a', 'slow-b'].map((group) => consumeWebhooks({
      SWITCHYARD_RELAY_URL: nats.url, SWITCHYARD_CONSUME_GROUP: group,
      // The dead URL first: each event spends 2 + 4 s retrying it before its dead letter.
      SWITCHYARD_WEBHOOK_URLS: `${dead.url},${healthy.url}`, SWITCHYARD_WEBHOOK_ALLOW_PRIVATE_NETWORK: 'true',
      SWITCHYARD_WEBHOOK_ATTEMPTS: '3', SWITCHYARD_WEBHOOK_BACKOFF_MS: '2000',
    }));
    for (const begun = Date.now(); !outputs.every((output) => output().includes('consuming JetStream'));) {
      if (Date.now() - begun > 30_000) throw new Error(`consumers did not start: ${outputs.map((output) => output()).join('\n---\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Four events of one type: one durable per type, so they queue behind one another unless several are in hand.
    const published = [1, 2, 3, 4].map(() => event('BudgetThresholdCrossed'));
    const js = jetstream(client);
    const sent = Date.now();
    for (const e of published) {
      const message = relayMessage(eventView(e));
      await js.publish(natsSubject(message), message.body, { msgID: message.eventId });
    }
    // Every event reaches the healthy receiver once per group, while the dead one is still being retried
    // (one after the other, URL after URL, the fourth would have come some 24 s in).
    // (A new group's durables start at the stream's beginning: the earlier test's events come too, and are not counted.)
    const ours = () => healthy.received.filter((r) => published.some((e) => e.eventId === r.delivery));
    for (; ours().length < 8;) {
      if (Date.now() - sent > 5_000) throw new Error(`the healthy receiver got ${ours().length} of 8 within 5 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(ours().map((r) => r.delivery).sort()).toEqual([...published, ...published].map((e) => e.eventId).sort());
    expect(Date.now() - sent).toBeLessThan(5_000);
    // Then the dead URL's dead letters: one per event and group, the same event and URL index in both groups,
    // inside the stream's two-minute duplicate window — both stored, each naming its group.
    const manager = await jetstreamManager(client);
    const lettersOf = async () => {
      const letters: WebhookDeadLetter[] = [];
      const info = await manager.streams.info(NATS_DEAD_LETTER_STREAM).catch(() => null);
      if (!info) return letters;
      const reader = await js.consumers.get(NATS_DEAD_LETTER_STREAM);
      for (let i = 0; i < info.state.messages; i++) letters.push((await reader.next({ expires: 5_000 }))!.json<WebhookDeadLetter>());
      // The earlier test's consumers (groups hooks, guarded) are still running and dead-letter these events too —
      // `guarded` at the same URL index 0 as these groups: it has its own letters, counted apart.
      return letters.filter((letter) => published.some((e) => e.eventId === letter.eventId) && letter.group?.startsWith('slow-'));
    };
    let letters: WebhookDeadLetter[] = [];
    for (const begun = Date.now(); letters.length < 8; letters = await lettersOf()) {
      if (Date.now() - begun > 30_000) throw new Error(`dead letters: ${letters.length} of 8`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(letters.map((l) => `${l.group}:${l.eventId}:${l.target.index}`).sort()).toEqual(
      ['slow-a', 'slow-b'].flatMap((group) => published.map((e) => `${group}:${e.eventId}:0`)).sort());
  }, 90_000);

  test('RabbitMQ not answering at start: the consumer says which broker and why while it keeps trying, never the password', async () => {
    const output = consumeWebhooks({ SWITCHYARD_RELAY_URL: 'amqp://guest:not-shown-pw@127.0.0.1:9', SWITCHYARD_WEBHOOK_URLS: 'http://127.0.0.1:9/x' });
    for (const begun = Date.now(); !output().includes('cannot reach the RabbitMQ broker');) {
      if (Date.now() - begun > 20_000) throw new Error(`no word of the broker: ${output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Once per reason while it retries every second: wait for a few retries, then count (afterAll stops it).
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(output()).toMatch(/cannot reach the RabbitMQ broker at 127\.0\.0\.1:9 \(SWITCHYARD_RELAY_URL\): \S.*; retrying every second/);
    expect(output().match(/cannot reach the RabbitMQ broker/g)).toHaveLength(1);
    expect(output()).not.toContain('not-shown-pw');
  }, 40_000);

  test('RabbitMQ (shared, 5672): a delivery that recovers is accepted once; a dead target leaves a dead letter in <group>.dead-letters', async () => {
    const recovering = await receiver(1, 200);
    const dead = await receiver(0, 500);
    servers.push(recovering.server, dead.server);
    const group = `switchyard-webhooks-test-${Date.now().toString(36)}`;
    const output = consumeWebhooks({
      SWITCHYARD_RELAY_URL: SHARED_RABBITMQ, SWITCHYARD_CONSUME_GROUP: group, SWITCHYARD_WEBHOOK_URLS: `${recovering.url},${dead.url}`,
      SWITCHYARD_WEBHOOK_ALLOW_PRIVATE_NETWORK: 'true', SWITCHYARD_WEBHOOK_ATTEMPTS: '2', SWITCHYARD_WEBHOOK_BACKOFF_MS: '50',
    });
    const connection = await amqp.connect(SHARED_RABBITMQ);
    try {
      for (const begun = Date.now(); !output().includes('consuming RabbitMQ exchange');) {
        if (Date.now() - begun > 30_000) throw new Error(`consumer did not start: ${output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const channel = await connection.createConfirmChannel();
      const revoked = event('ApiKeyRevoked');
      const message = relayMessage(eventView(revoked));
      channel.publish(RABBITMQ_EXCHANGE, message.type, Buffer.from(message.body), { persistent: true, messageId: message.eventId, type: message.type });
      await channel.waitForConfirms();
      let letter: amqp.GetMessage | false = false;
      for (const begun = Date.now(); !letter;) {
        if (Date.now() - begun > 30_000) throw new Error(`no dead letter: ${output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        letter = await channel.get(`${group}.dead-letters`, { noAck: true });
      }
      const record = JSON.parse(letter.content.toString()) as WebhookDeadLetter;
      expect([record.eventId, record.target, record.attempts, record.lastStatus]).toEqual([revoked.eventId, { origin: dead.url, index: 1 }, 2, 500]);
      expect([letter.properties.messageId, letter.properties.deliveryMode]).toEqual([`${revoked.eventId}:1`, 2]);
      expect(recovering.received.map((r) => [r.delivery, r.answered])).toEqual([[revoked.eventId, 503], [revoked.eventId, 200]]);
      await channel.deleteQueue(group);
      await channel.deleteQueue(`${group}.dead-letters`);
    } finally {
      await connection.close();
    }
  }, 60_000);
});
