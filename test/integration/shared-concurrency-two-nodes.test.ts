import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { AdmissionControl, DeploymentConcurrency } from '../../modules/limits/index.js';
import type { MockRequestRecord } from '../../modules/providers/mock/mock-provider-server.js';
import { waitUntil } from '../support/resilience.js';
import { createScratchDatabase, requireService } from '../support/services.js';

const databaseUrl = requireService('DATABASE_URL');
const redisUrl = requireService('REDIS_URL');
const describeWithServices = databaseUrl && redisUrl ? describe : describe.skip;

/**
 * One slow deployment behind an alias limited to 3 concurrent requests; a quota group of two deployments
 * allowing 2 concurrent calls, with a route outside the group to take the overflow; the same group alone;
 * an alias limited to 1 whose requests a small budget downgrades to the alias limited to 3.
 */
const yaml = (id: string) => (mockUrl: string, keyEnv: string) => `
providers:
  - id: mock-upstream
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true
    apiKey: env:SY_TEST_UPSTREAM_KEY
deployments:
  - id: slow-${id}
    provider: mock-upstream
    model: m-slow-${id}
    price: { inputPer1M: "1", outputPer1M: "2" }
  - id: pool-a-${id}
    provider: mock-upstream
    model: m-pool-a-${id}
    quotaGroup: pool-${id}
    limits: { maxConcurrency: 2 }
    price: { inputPer1M: "1", outputPer1M: "2" }
  - id: pool-b-${id}
    provider: mock-upstream
    model: m-pool-b-${id}
    quotaGroup: pool-${id}
    limits: { maxConcurrency: 2 }
    price: { inputPer1M: "1", outputPer1M: "2" }
  - id: spill-${id}
    provider: mock-upstream
    model: m-spill-${id}
    price: { inputPer1M: "1", outputPer1M: "2" }
  - id: pricey-${id}
    provider: mock-upstream
    model: m-pricey-${id}
    price: { inputPer1M: "100", outputPer1M: "2000" }
aliases:
  - name: capped-${id}
    routes: [{ deployment: slow-${id} }]
    policy: { limits: { maxConcurrency: 3 } }
  - name: pooled-${id}
    routes: [{ deployment: pool-a-${id} }, { deployment: pool-b-${id} }, { deployment: spill-${id}, priority: 1 }]
  - name: pool-only-${id}
    routes: [{ deployment: pool-a-${id} }, { deployment: pool-b-${id} }]
  - name: premium-${id}
    routes: [{ deployment: pricey-${id} }]
    policy: { budgetDowngrade: capped-${id}, limits: { maxConcurrency: 1 } }
tenants:
  - id: t-${id}
  - id: t-${id}-frugal
    budget: { dailyUsd: "0.01" }
apiKeys:
  - id: k-${id}
    tenant: t-${id}
    key: env:${keyEnv}
  - id: k-${id}-frugal
    tenant: t-${id}-frugal
    key: env:SY_TEST_CC_FRUGAL_KEY
`;

interface Outcome {
  status: number;
  json: any;
  retryAfter: string | null;
}

async function call(gw: TestGateway, key: string, model: string): Promise<Outcome & { downgrade: string | null }> {
  const response = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'Say something short.' }] }),
  });
  return {
    status: response.status, json: await response.json(), retryAfter: response.headers.get('retry-after'), downgrade: response.headers.get('x-switchyard-budget-downgrade'),
  };
}

/** The most calls the upstream held at once among `records` (an end and a start at the same instant do not overlap). */
function maxInFlight(records: readonly MockRequestRecord[]): number {
  const edges = records.flatMap((r) => [{ at: r.receivedAt, delta: 1 }, { at: r.endedAt ?? Infinity, delta: -1 }]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let current = 0;
  let max = 0;
  for (const edge of edges) max = Math.max(max, (current += edge.delta));
  return max;
}

/**
 * Two gateway nodes sharing PostgreSQL and Redis and one mock upstream: an alias's `maxConcurrency` and a
 * deployment quota group's are counted once over both nodes, and every lease comes back.
 */
describeWithServices('concurrency of aliases and quota groups across two nodes (Redis)', () => {
  // Unique ids: Redis is shared with other runs.
  const id = randomBytes(4).toString('hex');
  const frugalKey = generateApiKey();
  process.env.SY_TEST_CC_FRUGAL_KEY = frugalKey;
  let scratch: { url: string; drop: () => Promise<void> };
  let nodeA: TestGateway;
  let nodeB: TestGateway;
  let redis: Redis;
  const calls = (model: string) => nodeA.mock.requests().filter((r) => r.model === model);
  const leases = async (kind: string, scopeId: string) => redis.zcard(`{switchyard}:cc:${kind}:${scopeId}`);
  const idle = (gw: TestGateway) => gw.gateway.app.get(AdmissionControl).load().aliases === 0 && gw.gateway.app.get(DeploymentConcurrency).total === 0;

  beforeAll(async () => {
    scratch = await createScratchDatabase(databaseUrl!);
    redis = new Redis(redisUrl!);
    nodeA = await startTestGateway({ databaseUrl: scratch.url, yaml: yaml(id), environment: { redisUrl, nodeId: `cc-a-${id}` } });
    const config = readFileSync(nodeA.configPath, 'utf8');
    // The second node reads the same file: it calls the first node's mock, so every upstream call is seen in one place.
    nodeB = await startTestGateway({ databaseUrl: scratch.url, yaml: () => config, environment: { redisUrl, nodeId: `cc-b-${id}` } });
    for (const model of [`m-slow-${id}`, `m-pool-a-${id}`, `m-pool-b-${id}`, `m-spill-${id}`]) nodeA.mock.addScenario({ model, behaviour: { latencyMs: 1_000 } });
  }, 60_000);
  afterAll(async () => {
    await nodeB?.close();
    await nodeA?.close();
    redis?.disconnect();
    await scratch?.drop();
  });

  const burst = (model: string, key = nodeA.key) => Promise.all(Array.from({ length: 10 }, (_, i) => call(i % 2 ? nodeB : nodeA, key, model)));

  test('an alias limited to 3 concurrent requests serves 3 over both nodes, refuses the rest with 429, and takes new ones once they end', async () => {
    const alias = `capped-${id}`;
    for (let round = 0; round < 2; round++) {
      nodeA.mock.clearRequests();
      const outcomes = await burst(alias);
      expect(outcomes.filter((o) => o.status === 200)).toHaveLength(3);
      for (const o of outcomes.filter((o) => o.status !== 200)) {
        expect(o.status).toBe(429);
        expect(o.json.error).toMatchObject({ code: 'rate_limited', scope: 'alias.maxConcurrency' });
        expect(o.retryAfter).toBe('1');
      }
      expect(calls(`m-slow-${id}`)).toHaveLength(3);
      expect(maxInFlight(calls(`m-slow-${id}`))).toBe(3);
      // Every lease came back: in Redis and in each node's own count.
      expect(await leases('alias', alias)).toBe(0);
      expect(idle(nodeA) && idle(nodeB)).toBe(true);
    }
  }, 30_000);

  test('a quota group allowing 2 concurrent calls gets at most 2 over both nodes; the route outside the group takes the overflow', async () => {
    nodeA.mock.clearRequests();
    const outcomes = await burst(`pooled-${id}`);
    expect(outcomes.map((o) => o.status)).toEqual(Array(10).fill(200));
    const group = [...calls(`m-pool-a-${id}`), ...calls(`m-pool-b-${id}`)];
    expect(group).toHaveLength(2);
    expect(maxInFlight(group)).toBe(2);
    expect(calls(`m-spill-${id}`)).toHaveLength(8);
    expect(await leases('quota_group', `pool-${id}`)).toBe(0);
    expect(idle(nodeA) && idle(nodeB)).toBe(true);
  }, 30_000);

  test('with only the group to route to, the overflow gets the saturated 503; the group serves again afterwards', async () => {
    nodeA.mock.clearRequests();
    const outcomes = await burst(`pool-only-${id}`);
    expect(outcomes.filter((o) => o.status === 200)).toHaveLength(2);
    for (const o of outcomes.filter((o) => o.status !== 200)) {
      expect(o.status).toBe(503);
      expect(o.json.error.message).toContain('saturated');
    }
    expect(maxInFlight([...calls(`m-pool-a-${id}`), ...calls(`m-pool-b-${id}`)])).toBe(2);
    expect((await call(nodeB, nodeA.key, `pool-only-${id}`)).status).toBe(200);
  }, 30_000);

  test("a budget downgrade counts the target alias's concurrency, not the one the client named", async () => {
    nodeA.mock.clearRequests();
    // premium allows 1 concurrent request, its target 3: the target's limit is the one that applies.
    const outcomes = await burst(`premium-${id}`, frugalKey);
    const served = outcomes.filter((o) => o.status === 200);
    expect(served).toHaveLength(3);
    for (const o of served) expect(o.downgrade).toBe(`premium-${id}->capped-${id}`);
    for (const o of outcomes.filter((o) => o.status !== 200)) {
      expect(o.status).toBe(429);
      expect(o.json.error).toMatchObject({ code: 'rate_limited', scope: 'alias.maxConcurrency' });
    }
    expect(calls(`m-pricey-${id}`)).toHaveLength(0);
    expect(maxInFlight(calls(`m-slow-${id}`))).toBe(3);
    expect(await leases('alias', `capped-${id}`)).toBe(0);
    expect(await leases('alias', `premium-${id}`)).toBe(0);
  }, 30_000);

  test('a stream the client abandons gives its quota group lease and its node slot back', async () => {
    nodeA.mock.clearScenarios();
    nodeA.mock.addScenario({ model: `m-pool-a-${id}`, behaviour: { latencyMs: 0, chunks: 200, chunkGapMs: 50 } });
    nodeA.mock.addScenario({ model: `m-pool-b-${id}`, behaviour: { latencyMs: 0, chunks: 200, chunkGapMs: 50 } });
    const client = new AbortController();
    const response = await fetch(`${nodeB.url}/v1/chat/completions`, {
      method: 'POST',
      signal: client.signal,
      headers: { authorization: `Bearer ${nodeA.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: `pool-only-${id}`, stream: true, messages: [{ role: 'user', content: 'Count slowly.' }] }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    expect(await leases('quota_group', `pool-${id}`)).toBe(1);
    client.abort();
    await reader.read().catch(() => undefined);
    await waitUntil(async () => (await leases('quota_group', `pool-${id}`)) === 0 && idle(nodeB), 10_000, 'the stream\'s leases are given back');
  }, 30_000);
});
