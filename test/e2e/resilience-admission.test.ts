import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { type TestGateway, postJson, sseData, startTestGateway } from '../support/gateway-harness.js';
import { ask, attemptsOf, callsTo, openRequest, permitsHeld, resilienceYaml, waitUntil } from '../support/resilience.js';

/**
 * Admission and overload (issue 5 §8): per-key and node-wide concurrency limits fail fast, saturated
 * deployments are skipped, and every permit comes back on every path.
 */
const LIMITED_KEY_ENV = `SY_TEST_LIMITED_${process.pid}_KEY`;

describe('resilience: admission and permits', () => {
  let gw: TestGateway;
  const limitedKey = generateApiKey();
  beforeAll(async () => {
    process.env[LIMITED_KEY_ENV] = limitedKey;
    gw = await startTestGateway({
      yaml: resilienceYaml(
        [
          { name: 'ok', routes: [{ id: 'ok-a' }] },
          { name: 'fail', routes: [{ id: 'fail-a' }] },
          // Alias limits that never refuse here, so the mixed run below also checks their permits come back.
          { name: 'stall', routes: [{ id: 'stall-a' }], policy: '      limits: { maxConcurrency: 50 }' },
          { name: 'midfail', routes: [{ id: 'midfail-a' }], policy: '      limits: { maxConcurrency: 50 }' },
          { name: 'slow', routes: [{ id: 'slow-a' }] },
          { name: 'narrow', routes: [{ id: 'narrow-a' }, { id: 'narrow-b' }] },
        ],
        `  - id: limited
    tenant: acme
    key: env:${LIMITED_KEY_ENV}
    limits: { maxConcurrency: 2 }
`,
        { 'narrow-a': '    limits: { maxConcurrency: 1 }' },
      ),
      environment: {
        admission: { maxConcurrentRequests: 8, maxConcurrentStreams: 4 },
        resilience: {
          deadlines: { requestTimeoutMs: 5_000, ttftTimeoutMs: 300, idleTimeoutMs: 300 },
          retry: { baseBackoffMs: 5, maxBackoffMs: 20 },
        },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    delete process.env[LIMITED_KEY_ENV];
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  test('a key over its concurrency limit gets 429 at once, naming the scope; the others proceed', async () => {
    gw.mock.addScenario({ model: 'm-ok-a', behaviour: { latencyMs: 400 } });
    const limited = { ...gw, key: limitedKey };
    const responses = await Promise.all(Array.from({ length: 3 }, () => postJson(limited, '/v1/chat/completions', ask('ok'))));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 429]);
    const refused = responses.find((r) => r.status === 429)!;
    expect(refused.json.error).toMatchObject({ code: 'rate_limited', type: 'rate_limit_error', scope: 'key.maxConcurrency' });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(callsTo(gw, 'm-ok-a')).toHaveLength(2);
  });

  test('the node fails fast with 503 overloaded past its request limit — no hidden queue', async () => {
    gw.mock.addScenario({ model: 'm-ok-a', behaviour: { latencyMs: 400 } });
    const responses = await Promise.all(Array.from({ length: 10 }, () => postJson(gw, '/v1/chat/completions', ask('ok'))));
    const refused = responses.filter((r) => r.status === 503);
    expect(responses.filter((r) => r.status === 200)).toHaveLength(8);
    expect(refused).toHaveLength(2);
    for (const r of refused) {
      expect(r.json.error).toMatchObject({ code: 'overloaded' });
      expect(r.headers.get('retry-after')).toBe('1');
    }
    // Refused, not parked until a slot frees up: the upstream saw exactly the admitted eight.
    expect(callsTo(gw, 'm-ok-a')).toHaveLength(8);
  });

  test('streams have their own, smaller limit', async () => {
    gw.mock.addScenario({ model: 'm-ok-a', behaviour: { chunks: 10, chunkGapMs: 40 } });
    const responses = await Promise.all(Array.from({ length: 6 }, () => postJson(gw, '/v1/chat/completions', ask('ok', { stream: true }))));
    expect(responses.filter((r) => r.status === 200 && sseData(r.text).at(-1) === '[DONE]')).toHaveLength(4);
    expect(responses.filter((r) => r.status === 503 && r.json.error.code === 'overloaded')).toHaveLength(2);
  });

  test('a saturated deployment is skipped for the next route instead of queueing behind it', async () => {
    gw.mock.addScenario({ model: 'm-narrow-a', behaviour: { latencyMs: 300 } });
    const [first, second] = await Promise.all([
      postJson(gw, '/v1/chat/completions', ask('narrow')),
      new Promise((resolve) => setTimeout(resolve, 50)).then(() => postJson(gw, '/v1/chat/completions', ask('narrow'))),
    ]);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect((await attemptsOf(gw, first.headers.get('x-request-id')!)).map((a) => a.deploymentId)).toEqual(['narrow-a']);
    const [attempt] = await attemptsOf(gw, second.headers.get('x-request-id')!);
    expect(attempt.deploymentId).toBe('narrow-b');
    expect(attempt.routing.reason).toContain('skipped narrow-a (saturated)');
    expect(callsTo(gw, 'm-narrow-a')).toHaveLength(1);
  });

  test('after a mixed run with successes, errors, timeouts, disconnects, refusals and exceptions, every permit is back to zero', async () => {
    gw.mock.addScenario({ model: 'm-fail-a', behaviour: { status: 500 } });
    gw.mock.addScenario({ model: 'm-stall-a', behaviour: { stall: 'before-first-token' } });
    gw.mock.addScenario({ model: 'm-midfail-a', behaviour: { errorAfterChunks: 2 } });
    gw.mock.addScenario({ model: 'm-slow-a', behaviour: { chunks: 40, chunkGapMs: 15 } });
    const kinds = ['ok', 'ok-stream', 'fail', 'stall', 'midfail', 'disconnect', 'unsupported', 'invalid', 'limited'] as const;
    const seen = new Map<string, Set<number>>();
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, permitsHeld(gw).requests);
    }, 5);
    const limited = { ...gw, key: limitedKey };
    const one = async (kind: (typeof kinds)[number]): Promise<number> => {
      switch (kind) {
        case 'ok':
          return (await postJson(gw, '/v1/chat/completions', ask('ok'))).status;
        case 'ok-stream':
          return (await postJson(gw, '/v1/chat/completions', ask('ok', { stream: true }))).status;
        case 'fail':
          return (await postJson(gw, '/v1/chat/completions', ask('fail'))).status;
        case 'stall':
          return (await postJson(gw, '/v1/chat/completions', ask('stall', { stream: true }))).status;
        case 'midfail':
          return (await postJson(gw, '/v1/chat/completions', ask('midfail', { stream: true }))).status;
        case 'unsupported': // refused inside the pipeline after admission (an exception path)
          return (await postJson(gw, '/v1/chat/completions', ask('ok', { n: 2 }))).status;
        case 'invalid':
          return (await postJson(gw, '/v1/chat/completions', { model: 'ok', messages: 'nope' })).status;
        case 'limited':
          return (await postJson(limited, '/v1/chat/completions', ask('ok', { stream: true }))).status;
        case 'disconnect': {
          const { response, abort } = await openRequest(gw.url, gw.key, ask('slow', { stream: true }));
          await new Promise<void>((resolve) => response.once('data', () => resolve()));
          abort();
          return -1;
        }
      }
    };
    try {
      let next = 0;
      await Promise.all(
        Array.from({ length: 6 }, async () => {
          while (next < 54) {
            const kind = kinds[next++ % kinds.length];
            const status = await one(kind);
            if (!seen.has(kind)) seen.set(kind, new Set());
            seen.get(kind)!.add(status);
          }
        }),
      );
    } finally {
      clearInterval(sampler);
    }
    // The run really exercised the paths it claims to.
    expect(peak).toBeGreaterThan(1);
    expect([...seen.get('ok')!]).toEqual([200]);
    expect(seen.get('fail')!.has(503)).toBe(true);
    expect([...seen.get('unsupported')!]).toEqual([400]);
    expect([...seen.get('invalid')!]).toEqual([400]);
    await waitUntil(() => Object.values(permitsHeld(gw)).every((n) => n === 0), 3_000, 'every permit released');
    expect(permitsHeld(gw)).toEqual({ requests: 0, streams: 0, keys: 0, tenants: 0, aliases: 0, queued: 0, deployments: 0 });
    // Every upstream call has ended too: nothing left hanging at the provider.
    await waitUntil(() => gw.mock.requests().every((r) => r.outcome !== 'in-flight'), 3_000, 'upstream calls ended');
  });
});
