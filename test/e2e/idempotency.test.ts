import { randomBytes } from 'node:crypto';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { type TestGateway, postJson, sseData, startTestGateway } from '../support/gateway-harness.js';
import { createScratchDatabase, requireService } from '../support/services.js';

/**
 * Issue 10 item 5: Idempotency-Key against real PostgreSQL (events, ledger) and Redis (the stored
 * outcomes), on two gateway nodes sharing both. The alias `once` opts out of the exact cache, so every
 * provider call saved here is saved by idempotency alone; the mock counts the calls it received.
 */
const databaseBase = requireService('DATABASE_URL');
const redisUrl = requireService('REDIS_URL');
const suite = databaseBase && redisUrl ? describe : describe.skip;

const KEY_ENV = `SY_TEST_IDEM_${process.pid}_KEY`;
const OTHER_ENV = `SY_TEST_IDEM_OTHER_${process.pid}_KEY`;

const yaml = (mockUrl: string) => `
providers:
  - id: mock-upstream
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true
    apiKey: env:SY_TEST_UPSTREAM_KEY
deployments:
  - id: primary
    provider: mock-upstream
    model: model-primary
    capabilities: [chat, streaming, tools]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "2.50", outputPer1M: "10.00" }
aliases:
  - name: once
    routes:
      - { deployment: primary, priority: 0 }
    policy: { cache: false, maxAttempts: 1 }
tenants:
  - id: acme
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${KEY_ENV}
    scopes: [inference]
  - id: acme-other
    tenant: acme
    key: env:${OTHER_ENV}
    scopes: [inference]
`;

suite('Idempotency-Key (Redis + PostgreSQL, two nodes)', () => {
  let node1: TestGateway;
  let node2: TestGateway;
  let drop: () => Promise<void>;
  let key: string;
  let otherKey: string;
  let counter = 0;
  const run = randomBytes(4).toString('hex');

  const idem = () => `idem-${run}-${++counter}`;
  const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'once', messages: [{ role: 'user', content }], ...extra });
  const send = (node: TestGateway, body: unknown, headers: Record<string, string>, path = '/v1/chat/completions') =>
    postJson(node, path, body, { authorization: `Bearer ${key}`, ...headers });
  /** Provider calls across both nodes (each node has a mock of its own). */
  const calls = () => node1.mock.requests().length + node2.mock.requests().length;

  beforeAll(async () => {
    const scratch = await createScratchDatabase(databaseBase!);
    drop = scratch.drop;
    key = generateApiKey();
    otherKey = generateApiKey();
    process.env[KEY_ENV] = key;
    process.env[OTHER_ENV] = otherKey;
    const environment = { redisUrl, cache: { namespace: `sy-test-idem-${run}` } };
    node1 = await startTestGateway({ databaseUrl: scratch.url, yaml, environment });
    node2 = await startTestGateway({ databaseUrl: scratch.url, yaml, environment });
  }, 60_000);

  afterAll(async () => {
    await node2?.close();
    await node1?.close();
    await drop?.();
  });

  beforeEach(() => {
    node1.mock.clearScenarios();
    node2.mock.clearScenarios();
  });

  test('a buffered retry gets the stored outcome, on either node, without a provider call', async () => {
    const headers = { 'idempotency-key': idem() };
    const body = chat('buffered once');
    const before = calls();
    const first = await send(node1, body, headers);
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    for (const node of [node1, node2]) {
      const retry = await send(node, body, headers);
      expect(retry.status).toBe(200);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.headers.get('x-request-id')).toBe(first.headers.get('x-request-id'));
      expect(retry.json).toEqual(first.json);
    }
    expect(calls()).toBe(before + 1);
    // The replays wrote nothing: one request stream, one RequestAdmitted for the key.
    const admitted = await node1.gateway.platform.database.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM events WHERE event_type = 'RequestAdmitted' AND data->>'idempotencyKey' = $1`, [headers['idempotency-key']]);
    expect(admitted[0].n).toBe('1');
  });

  test('a streamed retry is re-streamed as SSE in the client\'s format', async () => {
    const headers = { 'idempotency-key': idem() };
    const body = chat('streamed once', { stream: true, stream_options: { include_usage: true } });
    const before = calls();
    const first = await send(node1, body, headers);
    expect(first.headers.get('content-type')).toContain('text/event-stream');
    const text = (raw: string) => sseData(raw).filter((d) => d !== '[DONE]').map((d) => JSON.parse(d)).map((c) => c.choices[0]?.delta?.content ?? '').join('');
    const usage = (raw: string) => sseData(raw).filter((d) => d !== '[DONE]').map((d) => JSON.parse(d)).find((c) => c.usage)?.usage;
    const retry = await send(node2, body, headers);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('content-type')).toContain('text/event-stream');
    expect(text(retry.text)).toBe(text(first.text));
    expect(text(retry.text).length).toBeGreaterThan(0);
    expect(usage(retry.text)).toEqual(usage(first.text));
    expect(sseData(retry.text).at(-1)).toBe('[DONE]');
    expect(calls()).toBe(before + 1);

    const anthropic = { model: 'once', max_tokens: 100, messages: [{ role: 'user', content: 'anthropic once' }], stream: true };
    const anthropicHeaders = { 'idempotency-key': idem(), 'anthropic-version': '2023-06-01' };
    const live = await send(node1, anthropic, anthropicHeaders, '/v1/messages');
    const replay = await send(node2, anthropic, anthropicHeaders, '/v1/messages');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const frames = (raw: string) => sseData(raw).map((d) => JSON.parse(d));
    const said = (raw: string) => frames(raw).filter((f) => f.type === 'content_block_delta').map((f) => f.delta.text).join('');
    expect(said(replay.text)).toBe(said(live.text));
    expect(said(replay.text).length).toBeGreaterThan(0);
    expect(frames(replay.text).find((f) => f.type === 'message_delta').usage).toEqual(frames(live.text).find((f) => f.type === 'message_delta').usage);
    expect(frames(replay.text).at(-1).type).toBe('message_stop');
  });

  test('concurrent duplicates on both nodes wait for the first: one provider call, one billed attempt', async () => {
    node1.mock.setDefaults({ latencyMs: 400 });
    node2.mock.setDefaults({ latencyMs: 400 });
    try {
      const headers = { 'idempotency-key': idem() };
      const body = chat('concurrent once');
      const before = calls();
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => send(i % 2 === 0 ? node1 : node2, body, headers)));
      expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
      expect(calls()).toBe(before + 1);
      expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(5);
      expect(new Set(answers.map((a) => a.headers.get('x-request-id'))).size).toBe(1);
      expect(new Set(answers.map((a) => a.text)).size).toBe(1);
      await node1.gateway.platform.committer.drain();
      await node1.gateway.platform.runner.catchUp(['cost-ledger']);
      const ledger = await node1.gateway.platform.database.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM cost_ledger WHERE request_id = $1`, [answers[0].headers.get('x-request-id')]);
      expect(ledger[0].n).toBe('1');
      const admitted = await node1.gateway.platform.database.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM events WHERE event_type = 'RequestAdmitted' AND data->>'idempotencyKey' = $1`, [headers['idempotency-key']]);
      expect(admitted[0].n).toBe('1');
    } finally {
      node1.mock.setDefaults({ latencyMs: 0 });
      node2.mock.setDefaults({ latencyMs: 0 });
    }
  });

  test('the same key with a different body is 422 in the client\'s envelope, and changes nothing', async () => {
    const headers = { 'idempotency-key': idem() };
    await send(node1, chat('the original'), headers);
    const before = calls();
    const events = await node1.countEvents(['RequestAdmitted']);
    const openai = await send(node2, chat('something else'), headers);
    expect(openai.status).toBe(422);
    expect(openai.json.error).toMatchObject({ code: 'idempotency_key_reused', param: 'idempotency-key' });
    const anthropic = await send(node1, { model: 'once', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }, { ...headers, 'anthropic-version': '2023-06-01' }, '/v1/messages');
    expect(anthropic.status).toBe(422);
    expect(anthropic.json).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.stringContaining('Idempotency-Key') } });
    expect(calls()).toBe(before);
    expect(await node1.countEvents(['RequestAdmitted'])).toBe(events);
  });

  test('keys belong to their principal: another key may use the same Idempotency-Key', async () => {
    const headers = { 'idempotency-key': idem() };
    await send(node1, chat('mine'), headers);
    const before = calls();
    const theirs = await postJson(node1, '/v1/chat/completions', chat('theirs'), { authorization: `Bearer ${otherKey}`, ...headers });
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(calls()).toBe(before + 1);
  });

  test('errors are not stored: a retry after a provider failure runs again', async () => {
    const headers = { 'idempotency-key': idem() };
    const body = chat('fails first');
    // Both nodes call the mock the provider's baseUrl names last (node 2 applied the YAML last): fail on either.
    for (const node of [node1, node2]) node.mock.addScenario({ model: 'model-primary', times: 1, behaviour: { status: 500 } });
    const failed = await send(node1, body, headers);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    const before = calls();
    const retry = await send(node1, body, headers);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(calls()).toBe(before + 1);
    expect((await send(node2, body, headers)).headers.get('idempotent-replayed')).toBe('true');
  });

  test('a malformed Idempotency-Key is refused before anything happens', async () => {
    const before = calls();
    const answer = await send(node1, chat('bad key'), { 'idempotency-key': 'x'.repeat(300) });
    expect(answer.status).toBe(400);
    expect(answer.json.error.param).toBe('idempotency-key');
    expect(calls()).toBe(before);
  });
});

describe('Idempotency-Key in memory (no Redis)', () => {
  let gw: TestGateway;
  let drop: (() => Promise<void>) | undefined;

  afterAll(async () => {
    await gw?.close();
    await drop?.();
  });

  test('outcomes are kept for SWITCHYARD_IDEMPOTENCY_RETENTION_SECONDS, then a retry runs again', async () => {
    let databaseUrl: string | null = null;
    if (databaseBase) {
      const scratch = await createScratchDatabase(databaseBase);
      drop = scratch.drop;
      databaseUrl = scratch.url;
    }
    gw = await startTestGateway({ databaseUrl, environment: { cache: { idempotencyRetentionMs: 1_000, exactCacheEnabled: false } } });
    const body = { model: 'solo', messages: [{ role: 'user', content: 'retention' }] };
    const headers = { 'idempotency-key': 'retention-1' };
    expect((await postJson(gw, '/v1/chat/completions', body, headers)).headers.get('idempotent-replayed')).toBeNull();
    expect((await postJson(gw, '/v1/chat/completions', body, headers)).headers.get('idempotent-replayed')).toBe('true');
    expect(gw.mock.requests()).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await postJson(gw, '/v1/chat/completions', body, headers)).headers.get('idempotent-replayed')).toBeNull();
    expect(gw.mock.requests()).toHaveLength(2);
  });
});
