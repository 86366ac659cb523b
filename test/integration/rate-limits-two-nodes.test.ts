import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type TestGateway, sseData, startTestGateway } from '../support/gateway-harness.js';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { AdminClient } from '../support/admin-client.js';
import { OwnRedis, redisServerAvailable } from '../support/own-redis.js';
import { waitUntil } from '../support/resilience.js';
import { createScratchDatabase, requireService } from '../support/services.js';
import { testPort } from '../support/port-range.js';

const databaseUrl = requireService('DATABASE_URL');
const redisUrl = requireService('REDIS_URL');
const describeWithServices = databaseUrl && redisUrl ? describe : describe.skip;
const describeWithOwnRedis = databaseUrl && redisServerAvailable() ? describe : describe.skip;
const ADMIN_TOKEN = 'limits-admin-token-0123456789abcdef';

/** The configuration of both nodes: keys limited per minute (the test key first), one mock deployment. */
const limitedYaml = (keyId: string, limits: string, more = '') => (mockUrl: string, keyEnv: string) => `
providers:
  - id: mock-upstream
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true
    apiKey: env:SY_TEST_UPSTREAM_KEY
deployments:
  - id: model-${keyId}
    provider: mock-upstream
    model: m-${keyId}
    price: { inputPer1M: "1", outputPer1M: "2" }
aliases:
  - name: chat
    routes: [{ deployment: model-${keyId} }]
tenants:
  - id: t-${keyId}
apiKeys:
  - id: ${keyId}
    tenant: t-${keyId}
    key: env:${keyEnv}
    limits: ${limits}
${more}`;

interface Outcome {
  status: number;
  headers: Headers;
  complete: boolean;
  json: any;
}

async function call(gw: TestGateway, key: string, stream: boolean, maxTokens: number): Promise<Outcome> {
  const response = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', stream, max_tokens: maxTokens, messages: [{ role: 'user', content: 'Count to a few hundred.' }] }),
  });
  const text = await response.text();
  let json: any = null;
  if (!stream || response.status !== 200) json = JSON.parse(text);
  const complete = response.status === 200 && (stream ? sseData(text).at(-1) === '[DONE]' : Array.isArray(json.choices));
  return { status: response.status, headers: response.headers, complete, json };
}

/**
 * Two gateway nodes sharing PostgreSQL and Redis, 20 concurrent clients spread over both: a key whose
 * request limit binds, and a key's concurrency across nodes. (The acceptance with the token limit
 * binding — 600 RPM and 100,000 TPM for a whole minute — runs with two OS processes:
 * limits-two-processes.test.ts.) The window admits as fast as the clients ask until it is full, then only
 * refuses (the test runs for less than the one-minute window, so what it admits is one window's worth).
 */
describeWithServices('rate limits across two nodes (Redis + PostgreSQL)', () => {
  // Unique ids: Redis is shared with other runs, and a window outlives a test by a minute.
  const keyId = `rl-${randomBytes(4).toString('hex')}`;
  const requestKey = generateApiKey();
  process.env.SY_TEST_RL_REQUESTS_KEY = requestKey;
  const concurrentKey = generateApiKey();
  process.env.SY_TEST_RL_CONCURRENT_KEY = concurrentKey;
  let scratch: { url: string; drop: () => Promise<void> };
  let nodeA: TestGateway;
  let nodeB: TestGateway;

  beforeAll(async () => {
    scratch = await createScratchDatabase(databaseUrl!);
    // A second key whose request limit binds first (the machine cannot send 600 requests in a few seconds).
    const second = `  - id: ${keyId}-rpm\n    tenant: t-${keyId}\n    key: env:SY_TEST_RL_REQUESTS_KEY\n    limits: { rpm: 150, tpm: 100000 }\n` +
      `  - id: ${keyId}-cc\n    tenant: t-${keyId}\n    key: env:SY_TEST_RL_CONCURRENT_KEY\n    limits: { maxConcurrency: 2 }\n`;
    nodeA = await startTestGateway({ databaseUrl: scratch.url, yaml: limitedYaml(keyId, '{ rpm: 600, tpm: 100000 }', second), environment: { redisUrl, nodeId: 'rl-a' } });
    const config = readFileSync(nodeA.configPath, 'utf8');
    nodeB = await startTestGateway({ databaseUrl: scratch.url, yaml: () => config, environment: { redisUrl, nodeId: 'rl-b' } });
  }, 60_000);
  afterAll(async () => {
    await nodeB?.close();
    await nodeA?.close();
    await scratch?.drop();
  });

  /** 20 clients over both nodes until each meets a run of refusals (the window is full); every outcome checked. */
  async function load(key: string, scope: string, maxTokens: number): Promise<{ admitted: Outcome[]; refused: Outcome[] }> {
    const outcomes: Outcome[] = [];
    const until = Date.now() + 12_000;
    await Promise.all(Array.from({ length: 20 }, async (_, client) => {
      let refusedInARow = 0;
      while (Date.now() < until && refusedInARow < 5) {
        const outcome = await call(client % 2 ? nodeB : nodeA, key, client % 4 === 0, maxTokens);
        outcomes.push(outcome);
        refusedInARow = outcome.status === 429 ? refusedInARow + 1 : 0;
      }
    }));
    const admitted = outcomes.filter((o) => o.status === 200);
    const refused = outcomes.filter((o) => o.status !== 200);
    expect(admitted.every((o) => o.complete)).toBe(true); // nothing admitted is cut off
    for (const o of refused) {
      expect(o.status).toBe(429);
      expect(o.json.error.code).toBe('rate_limited');
      expect(o.json.error.scope).toBe(scope);
      expect(Number(o.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(refused.length).toBeGreaterThan(0);
    return { admitted, refused };
  }

  test('concurrency: a key limited to 2 concurrent requests gets 2 across both nodes, not 2 per node; leases come back', async () => {
    nodeA.mock.addScenario({ model: `m-${keyId}`, times: 4, behaviour: { latencyMs: 400 } });
    for (let round = 0; round < 2; round++) {
      const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => call(i % 2 ? nodeB : nodeA, concurrentKey, false, 16)));
      expect(outcomes.filter((o) => o.status === 200)).toHaveLength(2);
      for (const o of outcomes.filter((o) => o.status !== 200)) {
        expect(o.status).toBe(429);
        expect(o.json.error).toMatchObject({ code: 'rate_limited', scope: 'key.maxConcurrency' });
        expect(o.headers.get('retry-after')).toBe('1');
      }
    }
  }, 30_000);

  test('requests: admitted within the limit (+2%) and at least 95% of it', async () => {
    const { admitted } = await load(requestKey, `key:${keyId}-rpm`, 16);
    expect(admitted.length).toBeLessThanOrEqual(153);
    expect(admitted.length).toBeGreaterThanOrEqual(143);
  }, 30_000);
});

/**
 * A Redis of the test's own, stopped while two nodes serve one key (rpm 10): the nodes keep serving,
 * each within the limit on its own, say so in /admin/v1/status, and share the counter again once Redis
 * is back.
 */
describeWithOwnRedis('rate limits while the nodes\' Redis is stopped and restarted', () => {
  const keyId = `rlr-${randomBytes(4).toString('hex')}`;
  const redis = new OwnRedis(testPort(1120));
  let scratch: { url: string; drop: () => Promise<void> };
  let nodeA: TestGateway;
  let nodeB: TestGateway;

  beforeAll(async () => {
    await redis.start();
    scratch = await createScratchDatabase(databaseUrl!);
    const environment = (nodeId: string) => ({ redisUrl: redis.url, nodeId, adminToken: ADMIN_TOKEN });
    nodeA = await startTestGateway({ databaseUrl: scratch.url, yaml: limitedYaml(keyId, '{ rpm: 10 }'), environment: environment('rlr-a') });
    const config = readFileSync(nodeA.configPath, 'utf8');
    nodeB = await startTestGateway({ databaseUrl: scratch.url, yaml: () => config, environment: environment('rlr-b') });
  }, 60_000);
  afterAll(async () => {
    await nodeB?.close();
    await nodeA?.close();
    await scratch?.drop();
    await redis.stop();
  });

  const burst = async () => {
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => call(i % 2 ? nodeB : nodeA, nodeA.key, false, 16)));
    for (const o of outcomes) expect([200, 429]).toContain(o.status);
    return outcomes.filter((o) => o.status === 200).length;
  };
  const status = async (gw: TestGateway) => {
    const answer = await new AdminClient(gw.url, ADMIN_TOKEN).get('/status');
    if (answer.status !== 200) throw new Error(`status: ${answer.status} ${JSON.stringify(answer.json)}`);
    return answer.json.limits;
  };

  test('served with local limits while Redis is away, shared again after it returns', async () => {
    expect(await burst()).toBe(10);
    expect(await status(nodeA)).toEqual({ backend: 'redis', degraded: false, degradedSince: null });

    await redis.stop();
    // The window of the shared counter is gone with Redis; each node now counts its own 10.
    expect(await burst()).toBe(20);
    for (const gw of [nodeA, nodeB]) expect(await status(gw)).toMatchObject({ backend: 'local', degraded: true });

    await redis.start();
    await waitUntil(async () => (await status(nodeA)).degraded === false && (await status(nodeB)).degraded === false, 10_000, 'both nodes use Redis again');
    // The restarted Redis holds an empty window: one shared limit of 10 again, not 10 per node.
    expect(await burst()).toBe(10);
  }, 40_000);
});
