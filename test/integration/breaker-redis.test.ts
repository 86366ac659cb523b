import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';
import { createScratchDatabase, requireService } from '../support/services.js';
import { ask, attemptsOf, breakerEvents, callsTo, healthOf, resilienceYaml, waitUntil } from '../support/resilience.js';

const databaseUrl = requireService('DATABASE_URL');
const redisUrl = requireService('REDIS_URL');
const describeWithServices = databaseUrl && redisUrl ? describe : describe.skip;

/**
 * Two (then three) gateway nodes on one PostgreSQL database and one Redis: a breaker opened by the
 * failures node A saw makes node B skip that deployment within 2 s, without B ever calling it; a node
 * started later picks the open breaker up from Redis; A's recovery closes it on B as well.
 */
describeWithServices('circuit breakers across nodes (Redis)', () => {
  // Unique deployment ids: Redis is shared with other runs, and its breaker state outlives a test.
  const suffix = randomBytes(4).toString('hex');
  const primary = `primary-${suffix}`;
  const backup = `backup-${suffix}`;
  let scratch: { url: string; drop: () => Promise<void> };
  let nodeA: TestGateway;
  let nodeB: TestGateway;
  const environment = (nodeId: string) => ({
    redisUrl,
    nodeId,
    resilience: { breaker: { cooldownMs: 10_000 }, breakerSyncIntervalMs: 500 },
  });

  beforeAll(async () => {
    scratch = await createScratchDatabase(databaseUrl!);
    nodeA = await startTestGateway({
      databaseUrl: scratch.url,
      yaml: resilienceYaml([{ name: 'shared', routes: [{ id: primary }, { id: backup }] }]),
      environment: environment('node-a'),
    });
    // Node B applies the same configuration (it changes nothing) and calls A's mock upstream.
    const config = readFileSync(nodeA.configPath, 'utf8');
    nodeB = await startTestGateway({ databaseUrl: scratch.url, yaml: () => config, environment: environment('node-b') });
  }, 60_000);
  afterAll(async () => {
    await nodeB?.close();
    await nodeA?.close();
    await scratch?.drop();
  });

  /** B answers with A's key and A's mock: the key lives in the shared database. */
  const viaB = () => ({ ...nodeB, key: nodeA.key, mock: nodeA.mock });

  test('a breaker opened by failures seen on node A makes node B skip that deployment within 2 s', async () => {
    nodeA.mock.addScenario({ model: `m-${primary}`, behaviour: { status: 500 } });
    for (let i = 0; i < 5; i++) expect((await postJson(nodeA, '/v1/chat/completions', ask('shared'))).status).toBe(200);
    expect(healthOf(nodeA).stateOf(primary)).toBe('open');
    const openedOnA = Date.now();
    // B never saw a failure of its own; it learns of A's opening through Redis.
    expect(callsTo(nodeA, `m-${primary}`)).toHaveLength(5);
    await waitUntil(() => healthOf(nodeB).stateOf(primary) === 'open', 2_000, 'node B adopts the opening');
    expect(Date.now() - openedOnA).toBeLessThan(2_000);

    nodeA.mock.clearRequests();
    const response = await postJson(viaB(), '/v1/chat/completions', ask('shared'));
    expect(response.status).toBe(200);
    expect(nodeA.mock.requests().map((r) => r.model)).toEqual([`m-${backup}`]);
    const [attempt] = await attemptsOf(nodeB, response.headers.get('x-request-id')!);
    expect(attempt.deploymentId).toBe(backup);
    expect(attempt.routing.reason).toContain(`skipped ${primary} (circuit_open)`);

    // The log tells the story: A opened it from its own counts, B adopted it from A.
    await waitUntil(async () => (await breakerEvents(nodeA, primary)).length >= 2, 3_000, 'both breaker events');
    const events = await breakerEvents(nodeA, primary);
    expect(events.map((e) => [e.type, 'source' in e.data ? e.data.source : null, 'originNodeId' in e.data ? e.data.originNodeId : null])).toEqual(
      expect.arrayContaining([['BreakerOpened', 'local', 'node-a'], ['BreakerOpened', 'remote', 'node-a']]),
    );
  });

  test('a node that starts later picks up the open breaker from Redis before serving', async () => {
    const config = readFileSync(nodeA.configPath, 'utf8');
    const nodeC = await startTestGateway({ databaseUrl: scratch.url, yaml: () => config, environment: environment('node-c') });
    try {
      expect(healthOf(nodeC).stateOf(primary)).toBe('open');
      nodeA.mock.clearRequests();
      const response = await postJson({ ...nodeC, key: nodeA.key }, '/v1/chat/completions', ask('shared'));
      expect(response.status).toBe(200);
      expect(nodeA.mock.requests().map((r) => r.model)).toEqual([`m-${backup}`]);
    } finally {
      await nodeC.close();
    }
  }, 60_000);

  test('when node A\'s trials close the breaker, node B closes the one it adopted', async () => {
    nodeA.mock.clearScenarios(); // the upstream recovered
    await waitUntil(() => healthOf(nodeA).stateOf(primary) === 'half-open', 12_000, 'half-open on A');
    for (let i = 0; i < 5; i++) {
      const response = await postJson(nodeA, '/v1/chat/completions', ask('shared'));
      expect((await attemptsOf(nodeA, response.headers.get('x-request-id')!))[0].deploymentId).toBe(primary);
    }
    expect(healthOf(nodeA).stateOf(primary)).toBe('closed');
    await waitUntil(() => healthOf(nodeB).stateOf(primary) === 'closed', 2_000, 'node B closes too');
  }, 30_000);
});

describe('circuit breakers when Redis is unreachable', () => {
  test('the node still starts (within a bounded wait) and serves with per-node breakers', async () => {
    const started = Date.now();
    const gw = await startTestGateway({
      yaml: resilienceYaml([{ name: 'lonely', routes: [{ id: 'lonely-a' }] }]),
      environment: { redisUrl: 'redis://127.0.0.1:1', nodeId: 'node-without-redis' },
    });
    try {
      expect(Date.now() - started).toBeLessThan(20_000);
      gw.mock.addScenario({ model: 'm-lonely-a', behaviour: { status: 500 } });
      for (let i = 0; i < 2; i++) expect((await postJson(gw, '/v1/chat/completions', ask('lonely'))).status).toBe(503);
      expect(healthOf(gw).stateOf('lonely-a')).toBe('open'); // 2 requests × 3 attempts: 5 in a row opened it locally
    } finally {
      await gw.close();
    }
  }, 30_000);
});
