import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';
import {
  ask, attemptsOf, breakerEvents, callsTo, completionOf, healthOf, permitsHeld, resilienceYaml, waitUntil,
} from '../support/resilience.js';

/**
 * Chaos tests for buffered requests (issue 5): each asserts what the caller sees, the events recorded
 * and the calls the mock upstream received. Timeouts are short so the suite stays fast.
 */
const COOLDOWN_MS = 1_500;

describe('resilience: failover, breakers, retries', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      yaml: resilienceYaml([
        { name: 'outage', routes: [{ id: 'outage-primary' }, { id: 'outage-backup' }] },
        { name: 'flaky', routes: [{ id: 'flaky-primary' }, { id: 'flaky-backup' }] },
        { name: 'storm', routes: [{ id: 'storm-a' }, { id: 'storm-b' }] },
        { name: 'throttled', routes: [{ id: 'throttled-a' }, { id: 'throttled-b' }] },
        { name: 'hostile', routes: [{ id: 'hostile-a' }, { id: 'hostile-b' }] },
        { name: 'limited', routes: [{ id: 'limited-a' }, { id: 'limited-b' }] },
        { name: 'solo', routes: [{ id: 'solo-only' }] },
        { name: 'strict', routes: [{ id: 'strict-primary' }, { id: 'strict-backup' }] },
        { name: 'big', routes: [{ id: 'big-primary' }, { id: 'big-backup' }] },
        { name: 'budget', routes: [{ id: 'budget-a' }, { id: 'budget-b' }], policy: '      maxAttempts: 1' },
      ]),
      environment: {
        resilience: {
          deadlines: { requestTimeoutMs: 8_000, ttftTimeoutMs: 500, idleTimeoutMs: 500 },
          retry: { baseBackoffMs: 10, maxBackoffMs: 50, maxRetryAfterWaitMs: 500 },
          breaker: { cooldownMs: COOLDOWN_MS, maxCooldownMs: 10_000 },
        },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  test('an outage fails over within the deadline, the breaker opens, and later requests skip the broken deployment', async () => {
    gw.mock.addScenario({ model: 'm-outage-primary', behaviour: { status: 500 } });
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      const response = await postJson(gw, '/v1/chat/completions', ask('outage'));
      expect(response.status).toBe(200);
      // Bound demanded by the issue: well inside the request deadline (8 s here); generous for a loaded machine.
      expect(Date.now() - started).toBeLessThan(6_000);
      const attempts = await attemptsOf(gw, response.headers.get('x-request-id')!);
      expect(attempts.map((a) => [a.deploymentId, a.outcome, a.errorClass])).toEqual([
        ['outage-primary', 'failed', 'transient'],
        ['outage-backup', 'success', null],
      ]);
      expect(attempts[0].routing).toMatchObject({ strategy: 'priority', candidates: ['outage-primary', 'outage-backup'] });
      expect(attempts[1].routing.reason).toContain('attempt 2: transient: fall back → outage-backup');
    }
    expect(callsTo(gw, 'm-outage-primary')).toHaveLength(5);
    // The fifth consecutive failure opened the breaker, and the transition is in the log.
    await waitUntil(async () => (await breakerEvents(gw, 'outage-primary')).length > 0, 2_000, 'BreakerOpened');
    const [opened] = await breakerEvents(gw, 'outage-primary');
    expect(opened).toMatchObject({
      type: 'BreakerOpened',
      data: { deploymentId: 'outage-primary', reason: 'consecutive_failures', source: 'local', counts: { failures: 5, samples: 5, consecutiveFailures: 5 }, cooldownMs: COOLDOWN_MS },
    });

    const skipped = await postJson(gw, '/v1/chat/completions', ask('outage'));
    expect(skipped.status).toBe(200);
    expect(callsTo(gw, 'm-outage-primary')).toHaveLength(5); // no new call to the open deployment
    const attempts = await attemptsOf(gw, skipped.headers.get('x-request-id')!);
    expect(attempts.map((a) => a.deploymentId)).toEqual(['outage-backup']);
    expect(attempts[0].routing.candidates).toEqual(['outage-backup']);
    expect(attempts[0].routing.reason).toContain('skipped outage-primary (circuit_open)');
  });

  test('recovery goes through half-open: trial requests reach the deployment, five successes close the breaker', async () => {
    // Continues the outage above: the upstream is healthy again.
    await waitUntil(() => healthOf(gw).stateOf('outage-primary') === 'half-open', COOLDOWN_MS + 2_000, 'half-open');
    for (let i = 0; i < 5; i++) {
      const response = await postJson(gw, '/v1/chat/completions', ask('outage'));
      expect(response.status).toBe(200);
      const [attempt] = await attemptsOf(gw, response.headers.get('x-request-id')!);
      expect(attempt).toMatchObject({ deploymentId: 'outage-primary', outcome: 'success' });
      expect(attempt.routing.reason).toContain('(half-open trial)');
    }
    expect(healthOf(gw).stateOf('outage-primary')).toBe('closed');
    await waitUntil(async () => (await breakerEvents(gw, 'outage-primary')).length >= 3, 2_000, 'BreakerClosed');
    const events = await breakerEvents(gw, 'outage-primary');
    expect(events.map((e) => e.type)).toEqual(['BreakerOpened', 'BreakerHalfOpened', 'BreakerClosed']);
    expect(events[2].data).toMatchObject({ source: 'local', trialSuccesses: 5 });
  });

  test('a failed trial reopens the breaker with the cool-down doubled', async () => {
    gw.mock.addScenario({ model: 'm-flaky-primary', behaviour: { status: 503 } });
    for (let i = 0; i < 5; i++) expect((await postJson(gw, '/v1/chat/completions', ask('flaky'))).status).toBe(200);
    expect(healthOf(gw).stateOf('flaky-primary')).toBe('open');
    await waitUntil(() => healthOf(gw).stateOf('flaky-primary') === 'half-open', COOLDOWN_MS + 2_000, 'half-open');
    const trial = await postJson(gw, '/v1/chat/completions', ask('flaky'));
    expect(trial.status).toBe(200); // the trial failed, the backup answered
    expect((await attemptsOf(gw, trial.headers.get('x-request-id')!)).map((a) => [a.deploymentId, a.outcome])).toEqual([
      ['flaky-primary', 'failed'], ['flaky-backup', 'success'],
    ]);
    await waitUntil(async () => (await breakerEvents(gw, 'flaky-primary')).length >= 3, 2_000, 'second BreakerOpened');
    const events = await breakerEvents(gw, 'flaky-primary');
    expect(events.map((e) => [e.type, 'reason' in e.data ? e.data.reason : null, 'cooldownMs' in e.data ? e.data.cooldownMs : null])).toEqual([
      ['BreakerOpened', 'consecutive_failures', COOLDOWN_MS],
      ['BreakerHalfOpened', null, null],
      ['BreakerOpened', 'trial_failed', COOLDOWN_MS * 2],
    ]);
  });

  test('a 429 storm: at most the attempt budget of upstream calls per request, the same route retried once, no retry storm', async () => {
    gw.mock.addScenario({ model: 'm-storm-a', behaviour: { status: 429 } });
    gw.mock.addScenario({ model: 'm-storm-b', behaviour: { status: 429 } });
    const responses = await Promise.all(Array.from({ length: 10 }, () => postJson(gw, '/v1/chat/completions', ask('storm'))));
    expect(gw.mock.requests().length).toBeLessThanOrEqual(30);
    for (const response of responses) {
      // Every route said "rate limited": the caller gets a 429 to retry later, not an outage.
      expect(response.status).toBe(429);
      expect(response.json.error).toMatchObject({
        code: 'rate_limited',
        scope: 'provider',
        candidates_tried: [{ route: 'storm#1', error_class: 'rate_limited' }, { route: 'storm#2', error_class: 'rate_limited' }],
      });
      const attempts = await attemptsOf(gw, response.headers.get('x-request-id')!);
      expect(attempts.map((a) => a.deploymentId)).toEqual(['storm-a', 'storm-a', 'storm-b']);
      expect(attempts[1].routing.reason).toMatch(/rate limited: retry once after \d+ ms backoff → storm-a/);
    }
    // Rate limits are the provider's quota, not its health: no breaker opened.
    expect(healthOf(gw).stateOf('storm-a')).toBe('closed');
  });

  test('retry-after is honoured: a throttled deployment is skipped by every request until then, and 503 says when to come back', async () => {
    gw.mock.addScenario({ model: 'm-throttled-a', behaviour: { status: 429, retryAfterSeconds: 3 } });
    gw.mock.addScenario({ model: 'm-throttled-b', behaviour: { status: 503, retryAfterSeconds: 2 } });
    const first = await postJson(gw, '/v1/chat/completions', ask('throttled'));
    expect(first.status).toBe(503);
    // retry-after 3 s is above the 500 ms the gateway will wait: fall back at once, never wait it out.
    expect(gw.mock.requests().map((r) => r.model)).toEqual(['m-throttled-a', 'm-throttled-b']);
    expect(first.headers.get('retry-after')).toBe('2'); // the soonest recovery of the two
    const later = await Promise.all(Array.from({ length: 10 }, () => postJson(gw, '/v1/chat/completions', ask('throttled'))));
    expect(gw.mock.requests()).toHaveLength(2); // no upstream call while both are throttled
    for (const response of later) {
      expect(response.status).toBe(503);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(response.headers.get('retry-after'))).toBeLessThanOrEqual(2);
      expect(response.json.error.candidates_tried).toEqual([
        // Held back by its 429's retry-after, and by its 503's: each says which.
        { route: 'throttled#1', error_class: 'rate_limited' },
        { route: 'throttled#2', error_class: 'throttled' },
      ]);
    }
  });

  test('every route rate limited by its provider: a 429 while the provider said so, and again while the gateway holds the routes back for it', async () => {
    gw.mock.addScenario({ model: 'm-limited-a', behaviour: { status: 429, retryAfterSeconds: 4 } });
    gw.mock.addScenario({ model: 'm-limited-b', behaviour: { status: 429, retryAfterSeconds: 4 } });
    const first = await postJson(gw, '/v1/chat/completions', ask('limited'));
    expect(first.status).toBe(429);
    expect(first.json.error).toMatchObject({ code: 'rate_limited', scope: 'provider' });
    const calls = gw.mock.requests().length;
    // Held back (no upstream call): still the client's 429 its SDK retries, not an outage's 503.
    const later = await postJson(gw, '/v1/chat/completions', ask('limited'));
    expect(gw.mock.requests()).toHaveLength(calls);
    expect(later.status).toBe(429);
    expect(later.json.error).toMatchObject({ code: 'rate_limited', scope: 'provider' });
    expect(later.json.error.candidates_tried).toEqual([
      { route: 'limited#1', error_class: 'rate_limited' },
      { route: 'limited#2', error_class: 'rate_limited' },
    ]);
    expect(Number(later.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(later.headers.get('retry-after'))).toBeLessThanOrEqual(4);
  });

  test('a provider asking for retry-after: 999999 holds its route back 300 s at most, and the client is told when that ends, never more', async () => {
    gw.mock.addScenario({ model: 'm-hostile-a', behaviour: { status: 429, retryAfterSeconds: 999_999 } });
    gw.mock.addScenario({ model: 'm-hostile-b', behaviour: { status: 503, retryAfterSeconds: 999_999 } });
    const first = await postJson(gw, '/v1/chat/completions', ask('hostile'));
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('300');
    expect(first.json.error).toMatchObject({ code: 'all_providers_unavailable', retry_after_s: 300 });
    expect(first.text).not.toContain('999999');
    // The gateway holds both routes back for exactly what it told the client: no upstream call meanwhile,
    // and each later refusal says how much of it is left.
    for (const [deployment, reason] of [['hostile-a', 'rate_limited'], ['hostile-b', 'throttled']]) {
      const held = healthOf(gw).unavailable(deployment)!;
      expect(held.reason).toBe(reason);
      expect(held.until - Date.now()).toBeLessThanOrEqual(300_000);
    }
    const later = await postJson(gw, '/v1/chat/completions', ask('hostile'));
    expect(gw.mock.requests()).toHaveLength(2);
    expect(later.status).toBe(503);
    const left = Number(later.headers.get('retry-after'));
    expect(left).toBeLessThanOrEqual(300);
    // Not sooner than the throttle ends (counted from now, after the answer was made).
    expect(left).toBeGreaterThanOrEqual(Math.ceil((healthOf(gw).unavailable('hostile-a')!.until - Date.now()) / 1000));
  });

  test('a transient failure on the only route is retried there with backoff, within the attempt budget', async () => {
    gw.mock.addScenario({ model: 'm-solo-only', times: 2, behaviour: { status: 500 } });
    const response = await postJson(gw, '/v1/chat/completions', ask('solo'));
    expect(response.status).toBe(200);
    const attempts = await attemptsOf(gw, response.headers.get('x-request-id')!);
    expect(attempts.map((a) => a.outcome)).toEqual(['failed', 'failed', 'success']);
    expect(attempts[1].routing.reason).toMatch(/transient: retry 1 after \d+ ms backoff → solo-only/);
    expect(attempts[2].routing.reason).toMatch(/transient: retry 2 after \d+ ms backoff → solo-only/);
    expect((await completionOf(gw, response.headers.get('x-request-id')!))!.fallbackDepth).toBe(2);

    gw.mock.addScenario({ model: 'm-solo-only', times: 5, behaviour: { status: 502 } });
    const exhausted = await postJson(gw, '/v1/chat/completions', ask('solo'));
    expect(exhausted.status).toBe(503);
    expect(callsTo(gw, 'm-solo-only')).toHaveLength(6); // 3 + the budget of 3
    expect(exhausted.json.error.candidates_tried).toEqual([{ route: 'solo#1', error_class: 'transient' }]);
  });

  test('auth, invalid_request and context_length failures are never retried or sent elsewhere', async () => {
    for (const [status, clientStatus, code] of [[401, 502, 'upstream_auth_error'], [400, 400, 'invalid_request'], [413, 413, 'context_length_exceeded']] as const) {
      gw.mock.clearRequests();
      gw.mock.addScenario({ model: 'm-strict-primary', times: 1, behaviour: { status } });
      const response = await postJson(gw, '/v1/chat/completions', ask('strict'));
      expect([response.status, response.json.error.code]).toEqual([clientStatus, code]);
      expect(gw.mock.requests().map((r) => r.model)).toEqual(['m-strict-primary']);
      expect(response.text).not.toContain('upstream-secret-value');
    }
  });

  test('the 503 names routes by alias-level name and error class, never deployments, providers, URLs or secrets', async () => {
    gw.mock.addScenario({ model: 'm-budget-a', behaviour: { status: 500 } });
    const response = await postJson(gw, '/v1/chat/completions', ask('budget'));
    expect(response.status).toBe(503);
    expect(response.json.error).toMatchObject({
      code: 'all_providers_unavailable',
      candidates_tried: [{ route: 'budget#1', error_class: 'transient' }],
      retry_after_s: 1,
    });
    expect(response.headers.get('retry-after')).toBe('1');
    // maxAttempts: 1 on this alias: the backup is never called.
    expect(gw.mock.requests().map((r) => r.model)).toEqual(['m-budget-a']);
    expect(response.text).not.toMatch(/budget-a|budget-b|mock-upstream|127\.0\.0\.1|upstream-secret-value/);
  });

  test('a body above 64 KiB replays in full to the fallback', async () => {
    gw.mock.addScenario({ model: 'm-big-primary', times: 1, behaviour: { status: 500 } });
    const content = `${'lorem ipsum dolor '.repeat(6_000)}END`; // ~105 KiB
    const response = await postJson(gw, '/v1/chat/completions', { model: 'big', messages: [{ role: 'user', content }] });
    expect(response.status).toBe(200);
    const calls = gw.mock.requests();
    expect(calls.map((r) => r.model)).toEqual(['m-big-primary', 'm-big-backup']);
    for (const call of calls) expect((call.body as { messages: Array<{ content: string }> }).messages[0].content).toBe(content);
  });

  test('attempts record TTFT and the provider request id; every permit is back', async () => {
    const response = await postJson(gw, '/v1/chat/completions', ask('outage'));
    const [attempt] = await attemptsOf(gw, response.headers.get('x-request-id')!);
    expect(attempt.providerRequestId).toMatch(/^mock-\d+$/);
    expect(attempt.ttftMs).toBeNull(); // buffered: no first token to time
    const stream = await postJson(gw, '/v1/chat/completions', ask('outage', { stream: true }));
    const [streamed] = await attemptsOf(gw, stream.headers.get('x-request-id')!);
    expect(streamed.providerRequestId).toMatch(/^mock-\d+$/);
    expect(streamed.ttftMs).toEqual(expect.any(Number));
    expect(streamed.ttftMs!).toBeLessThanOrEqual(streamed.latencyMs);
    await waitUntil(() => Object.values(permitsHeld(gw)).every((n) => n === 0), 2_000, 'permits released');
  });
});
