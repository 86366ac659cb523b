import { type ChildProcess, spawn } from 'node:child_process';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import amqp from 'amqplib';
import { connect as connectNats, type NatsConnection } from '@nats-io/transport-node';
import { recorded } from '../../events/index.js';
import { eventView } from '../../modules/relay/index.js';
import { AnalyticsEventWriter, AnalyticsInsertInProgress, ClickHouseConnection, clickHouseSettings } from '../../projections/clickhouse-analytics/index.js';
import { NATS_STREAM, RABBITMQ_EXCHANGE, natsSubject, relayMessage } from '../../modules/relay/index.js';
import { AdminClient } from '../support/admin-client.js';
import { ANALYTICS_KEYS, analyticsYaml, mixedTraffic } from '../support/analytics-fixtures.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import { MAIN, runCli } from '../support/cli-process.js';
import { type ScratchClickHouse, scratchClickHouse } from '../support/clickhouse.js';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { OwnNats } from '../support/own-nats.js';
import { requireService } from '../support/services.js';

const clickhouseUrl = requireService('CLICKHOUSE_URL');
const describeWithClickHouse = clickhouseUrl ? describe : describe.skip;
const ADMIN_TOKEN = 'consume-analytics-admin-token-0123';
const GROUP = 'switchyard-clickhouse-analytics';
const SHARED_RABBITMQ = 'amqp://guest:guest@127.0.0.1:5672';

/**
 * `switchyard consume clickhouse-analytics` fed by the relay on a NATS JetStream server of the suite's own:
 * a gateway on PostgreSQL with SWITCHYARD_ANALYTICS_FEED=broker (its own projection writes nothing), two
 * consumer processes of one group sharing the durable consumers, and every AttemptFinished published a
 * second time under another message id (past JetStream's de-duplication) — the rows and rollups still
 * equal the ledger to the cent, each event once.
 */
describeWithClickHouse('switchyard consume clickhouse-analytics: ClickHouse through the broker equals the ledger', () => {
  let nats: OwnNats;
  let gw: TestGateway;
  let ch: ScratchClickHouse;
  let admin: AdminClient;
  let client: NatsConnection;
  const consumers: ChildProcess[] = [];
  const output: string[] = [];
  const saved = { relay: process.env.SWITCHYARD_RELAY_URL, feed: process.env.SWITCHYARD_ANALYTICS_FEED };

  const ledger = <Row>(sql: string) => gw.gateway.platform.database.query<Row>(sql);
  const consumerEnv = () => ({ ...process.env, SWITCHYARD_RELAY_URL: nats.url, CLICKHOUSE_URL: ch.url, LOG_LEVEL: 'log' });
  const startConsumer = (env: NodeJS.ProcessEnv = consumerEnv()) => {
    const child = spawn(process.execPath, [MAIN, 'consume', 'clickhouse-analytics'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const index = output.push('') - 1;
    child.stdout!.on('data', (d) => (output[index] += d));
    child.stderr!.on('data', (d) => (output[index] += d));
    consumers.push(child);
    return index;
  };
  /** Until every durable of the group has nothing pending or unacknowledged. */
  const drained = async () => {
    const manager = await jetstreamManager(client);
    for (const started = Date.now(); ;) {
      const infos = await Promise.all(['AttemptFinished', 'RequestServedFromCache'].map((type) =>
        manager.consumers.info(NATS_STREAM, `${GROUP}-${type}`).catch(() => null)));
      if (infos.every((info) => info && info.num_pending === 0 && info.num_ack_pending === 0)) return;
      if (Date.now() - started > 60_000) throw new Error(`consumers did not drain: ${output.join('\n---\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const attemptRows = async () => Number((await ch.rows(`SELECT toString(count()) AS n FROM ${ch.database}.attempts`))[0].n);

  beforeAll(async () => {
    nats = await OwnNats.start();
    ch = scratchClickHouse(clickhouseUrl!);
    process.env.SWITCHYARD_RELAY_URL = nats.url;
    process.env.SWITCHYARD_ANALYTICS_FEED = 'broker';
    gw = await startTestGateway({ yaml: analyticsYaml, environment: { adminToken: ADMIN_TOKEN, clickhouseUrl: ch.url } });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
    client = await connectNats({ servers: nats.url });
    gw.mock.setDefaults({ cachedTokens: 2, chunkGapMs: 5 });
    gw.mock.addScenario({ model: 'model-primary', behaviour: { failureRate: 0.3, status: 503 } });
    gw.mock.addScenario({ model: 'model-shaky', behaviour: { errorAfterChunks: 2 } });
    await mixedTraffic(gw.url, gw.key, 12);
    await gw.gateway.platform.committer.drain();
    await gw.gateway.platform.runner.catchUp(['cost-ledger', 'relay']);
  }, 120_000);

  afterAll(async () => {
    for (const child of consumers) child.kill('SIGKILL');
    await client?.close();
    await gw?.close();
    await nats?.close();
    await ch?.drop();
    for (const [name, value] of [['SWITCHYARD_RELAY_URL', saved.relay], ['SWITCHYARD_ANALYTICS_FEED', saved.feed]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  test('a consumer that cannot run says why and exits: an unknown name, a Kafka URL, no ClickHouse', async () => {
    // The first as a process of its own; meanwhile the other two in this process (cli-in-process.ts: the same
    // code, refusing before it connects to anything, without a process's seconds of start-up each).
    const [unknown, kafka, noClickHouse] = await Promise.all([
      runCli(['consume', 'spreadsheets'], consumerEnv()),
      // LOG_LEVEL error: consume sets the process's Nest logger, which this process's gateway logs through too.
      runCliInProcess(['consume', 'clickhouse-analytics'], { ...consumerEnv(), LOG_LEVEL: 'error', SWITCHYARD_RELAY_URL: 'kafka://127.0.0.1:9092' }),
      runCliInProcess(['consume', 'clickhouse-analytics'], { ...consumerEnv(), LOG_LEVEL: 'error', CLICKHOUSE_URL: '' }),
    ]);
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining('no consumer "spreadsheets" (consumers: clickhouse-analytics, webhooks)')]);
    expect([kafka.code, kafka.stderr]).toEqual([1, expect.stringContaining('reads NATS JetStream (nats://) or RabbitMQ (amqp://)')]);
    expect([noClickHouse.code, noClickHouse.stderr]).toEqual([1, expect.stringContaining('needs CLICKHOUSE_URL')]);
    // A ClickHouse that does not answer is named as such — not as the broker, which was reached.
    const deadClickHouse = await runCliInProcess(['consume', 'clickhouse-analytics'], { ...consumerEnv(), LOG_LEVEL: 'error', CLICKHOUSE_URL: 'http://127.0.0.1:9/' });
    expect(deadClickHouse.code).toBe(1);
    expect(deadClickHouse.stderr).toContain('ClickHouse (CLICKHOUSE_URL) cannot be prepared');
    expect(deadClickHouse.stderr).not.toContain('broker');
  }, 60_000);

  test('with SWITCHYARD_ANALYTICS_FEED=broker the gateway runs no ClickHouse projection and writes no row', async () => {
    expect(gw.gateway.platform.runner.status().map((s) => s.name)).not.toContain('clickhouse-analytics');
    expect(gw.gateway.platform.runner.status().map((s) => s.name)).toContain('relay');
    const tables = await ch.rows(`SELECT name FROM system.tables WHERE database = '${ch.database}' AND name = 'attempts'`);
    expect(tables).toEqual([]);
  });

  test('two consumers of one group write every attempt once; a second copy of every message changes nothing; totals equal the ledger', async () => {
    startConsumer();
    startConsumer();
    const [{ events }] = await ledger<{ events: number }>(`SELECT count(*)::int AS events FROM events WHERE event_type = 'AttemptFinished'`);
    // 36 requests, some of them retried (a 30% failure rate upstream: how many varies run to run).
    expect(events).toBeGreaterThanOrEqual(30);
    await drained();
    expect(await attemptRows()).toBe(events);

    // Every AttemptFinished again, as a redelivery after a lost acknowledgement would bring it (another
    // message id, so JetStream stores it again): the rows stay one per event id.
    const streams = await ledger<{ stream_id: string }>(`SELECT DISTINCT stream_id FROM events WHERE event_type = 'AttemptFinished'`);
    const recorded = await gw.gateway.platform.store.readStreams(streams.map((s) => s.stream_id));
    const js = jetstream(client);
    for (const event of [...recorded.values()].flat().filter((e) => e.type === 'AttemptFinished')) {
      const message = relayMessage(eventView(event));
      await js.publish(natsSubject(message), message.body, { msgID: `again-${message.eventId}` });
    }
    await drained();
    const [raw] = await ch.rows(`SELECT toString(count()) AS n, toString(uniqExact(event_id)) AS ids FROM ${ch.database}.attempts`);
    expect([Number(raw.n), Number(raw.ids)]).toEqual([events, events]);

    const ledgerRows = await ledger<{ request_id: string; attempt: number; cost_usd: string; input_tokens: string; output_tokens: string }>(
      `SELECT request_id, attempt, cost_usd::text AS cost_usd, input_tokens, output_tokens FROM cost_ledger ORDER BY request_id, attempt`,
    );
    const chRows = await ch.rows(
      `SELECT request_id, attempt, toString(cost_usd) AS cost_usd, input_tokens, output_tokens FROM ${ch.database}.attempts
       WHERE billable = 1 ORDER BY request_id, attempt`,
    );
    expect(chRows).toEqual(ledgerRows);

    // The rollups (materialized views over the raw rows) through the analytics API, against the ledger.
    const query = 'granularity=hour&groupBy=tenant,key,model';
    const [fromClickHouse, fromPostgres] = await Promise.all([
      admin.get(`/analytics/spend?${query}&source=clickhouse`), admin.get(`/analytics/spend?${query}&source=postgres`),
    ]);
    expect([fromClickHouse.status, fromPostgres.status]).toEqual([200, 200]);
    expect(fromClickHouse.json.source).toBe('clickhouse');
    expect(fromClickHouse.json.rows).toEqual(fromPostgres.json.rows);
    expect(fromClickHouse.json.totals).toEqual(fromPostgres.json.totals);
    const [direct] = await ledger<{ cost: string; attempts: number }>(`SELECT sum(cost_usd)::text AS cost, count(*)::int AS attempts FROM cost_ledger`);
    expect([fromClickHouse.json.totals.costUsd, fromClickHouse.json.totals.attempts]).toEqual([direct.cost, direct.attempts]);
    expect(new Set(fromClickHouse.json.rows.map((r: any) => r.key))).toEqual(new Set(Object.values(ANALYTICS_KEYS)));
    for (const text of output) expect(text).toContain(`consuming JetStream stream SWITCHYARD at 127.0.0.1:${nats.port} as group ${GROUP}`);
  }, 120_000);
  test('RabbitMQ (shared, 5672): two consumers of one group on a durable queue write each event once, every message published twice', async () => {
    const own = scratchClickHouse(clickhouseUrl!);
    const group = `switchyard-test-${Date.now().toString(36)}`;
    const connection = await amqp.connect(SHARED_RABBITMQ);
    try {
      const env = { ...consumerEnv(), SWITCHYARD_RELAY_URL: SHARED_RABBITMQ, CLICKHOUSE_URL: own.url, SWITCHYARD_CONSUME_GROUP: group };
      const started = [startConsumer(env), startConsumer(env)];
      // The queue is bound once a consumer listens: a topic exchange drops what no queue is bound to.
      for (const begun = Date.now(); !started.every((i) => output[i].includes('consuming RabbitMQ exchange switchyard.events'));) {
        if (Date.now() - begun > 30_000) throw new Error(`consumers did not start: ${started.map((i) => output[i]).join('\n---\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const streams = await ledger<{ stream_id: string }>(`SELECT DISTINCT stream_id FROM events WHERE event_type = 'AttemptFinished'`);
      const recorded = await gw.gateway.platform.store.readStreams(streams.map((s) => s.stream_id));
      const messages = [...recorded.values()].flat().filter((e) => e.type === 'AttemptFinished').map((e) => relayMessage(eventView(e)));
      const channel = await connection.createConfirmChannel();
      // Each twice, as the relay publishes again after a crash between the broker's confirm and its checkpoint.
      for (const message of [...messages, ...messages]) {
        channel.publish(RABBITMQ_EXCHANGE, message.type, Buffer.from(message.body), { persistent: true, messageId: message.eventId, type: message.type });
      }
      await channel.waitForConfirms();
      // Other suites publish to the shared exchange: only this run's events are counted.
      const ids = messages.map((m) => `'${m.eventId}'`).join(', ');
      const count = async () => (await own.rows(`SELECT toString(count()) AS n, toString(uniqExact(event_id)) AS ids FROM ${own.database}.attempts WHERE event_id IN (${ids})`))[0];
      for (const begun = Date.now(); ;) {
        const queue = await channel.checkQueue(group);
        const rows = await count().catch(() => ({ n: '0', ids: '0' }));
        if (queue.messageCount === 0 && Number(rows.n) >= messages.length) break;
        if (Date.now() - begun > 60_000) throw new Error(`queue ${group} did not drain (${queue.messageCount} left, ${rows.n} rows)`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // Settled: nothing unacknowledged remains (the second copies were handled too).
      await new Promise((resolve) => setTimeout(resolve, 500));
      const rows = await count();
      expect([Number(rows.n), Number(rows.ids)]).toEqual([messages.length, messages.length]);
      const ledgerRows = await ledger<{ request_id: string; attempt: number; cost_usd: string }>(
        `SELECT request_id, attempt, cost_usd::text AS cost_usd FROM cost_ledger ORDER BY request_id, attempt`,
      );
      const chRows = await own.rows(
        `SELECT request_id, attempt, toString(cost_usd) AS cost_usd FROM ${own.database}.attempts WHERE billable = 1 AND event_id IN (${ids}) ORDER BY request_id, attempt`,
      );
      expect(chRows).toEqual(ledgerRows);
      await channel.deleteQueue(group);
    } finally {
      await connection.close();
      await own.drop();
    }
  }, 120_000);
  test('the same event written by 12 deliveries at once: one row, one contribution to the rollups; the others are told to retry', async () => {
    const own = scratchClickHouse(clickhouseUrl!);
    const connection = new ClickHouseConnection(clickHouseSettings(own.url));
    try {
      const writer = new AnalyticsEventWriter(connection);
      await writer.prepare();
      const [billed] = await ledger<{ stream_id: string; event_id: string }>(
        `SELECT stream_id, event_id::text AS event_id FROM events WHERE event_type = 'AttemptFinished' AND (data->'cost'->>'total')::numeric > 0 LIMIT 1`,
      );
      const event = recorded(await gw.gateway.platform.store.readStream(billed.stream_id)).find((e) => e.eventId === billed.event_id)!;
      const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => writer.write(event as any)));
      const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason);
      for (const reason of refused) expect(reason).toBeInstanceOf(AnalyticsInsertInProgress);
      await writer.write(event as any);
      const [row] = await own.rows(`SELECT toString(count()) AS n, toString(sum(cost_usd)) AS cost FROM ${own.database}.attempts`);
      const [hourly] = await own.rows(`SELECT toString(sum(attempts)) AS n, toString(sum(cost_usd)) AS cost FROM ${own.database}.spend_hourly`);
      const [ledgerRow] = await ledger<{ cost: string }>(`SELECT cost_usd::text AS cost FROM cost_ledger WHERE request_id = '${(event.data as any).requestId}' AND attempt = ${(event.data as any).attempt}`);
      expect([row.n, row.cost]).toEqual(['1', ledgerRow.cost]);
      expect([hourly.n, hourly.cost]).toEqual(['1', ledgerRow.cost]);
    } finally {
      await connection.close();
      await own.drop();
    }
  }, 60_000);
});
