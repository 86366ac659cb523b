import type { AttemptFinished } from '../../events/request-events.js';
import { type TestGateway, postJson, sseData, startTestGateway } from '../support/gateway-harness.js';
import {
  ask, attemptsOf, breakerEvents, callsTo, completionOf, openRequest, permitsHeld, resilienceYaml, waitUntil,
} from '../support/resilience.js';

/**
 * Chaos tests for streams (issue 5 §3, §5, §7, §8): stalls before and after the first token, broken
 * streams, disconnects, slow consumers and the absolute stream lifetime.
 */
const TTFT_MS = 500;
const IDLE_MS = 500;
const STREAM_MS = 3_000;
const WRITE_PROGRESS_MS = 400;

interface LedgerRow {
  attempt: number;
  outcome: string;
  /** bigint: decimal text. */
  output_tokens: string;
  usage_evidence: string;
  cost_usd: string;
}

describe('resilience: streams', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      yaml: resilienceYaml([
        { name: 'stall', routes: [{ id: 'stall-primary' }, { id: 'stall-backup' }] },
        { name: 'alias-ttft', routes: [{ id: 'slowstart-primary' }, { id: 'slowstart-backup' }], policy: '      ttftTimeoutMs: 150' },
        { name: 'idle', routes: [{ id: 'idle-primary' }, { id: 'idle-backup' }] },
        { name: 'broken', routes: [{ id: 'broken-primary' }, { id: 'broken-backup' }] },
        { name: 'malformed', routes: [{ id: 'malformed-primary' }, { id: 'malformed-backup' }] },
        { name: 'gone', routes: [{ id: 'gone-primary' }, { id: 'gone-backup' }] },
        { name: 'long', routes: [{ id: 'long-primary' }, { id: 'long-backup' }] },
      ]),
      environment: {
        resilience: {
          deadlines: { requestTimeoutMs: 8_000, ttftTimeoutMs: TTFT_MS, idleTimeoutMs: IDLE_MS, streamTimeoutMs: STREAM_MS, writeProgressTimeoutMs: WRITE_PROGRESS_MS },
          retry: { baseBackoffMs: 10, maxBackoffMs: 50 },
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

  async function ledgerRows(requestId: string): Promise<LedgerRow[]> {
    await gw.gateway.platform.committer.drain();
    await gw.gateway.platform.runner.catchUp(['cost-ledger']);
    return gw.gateway.platform.database.query<LedgerRow>(
      `SELECT attempt, outcome, output_tokens, usage_evidence, cost_usd::text AS cost_usd FROM cost_ledger WHERE request_id = $1 ORDER BY attempt`,
      [requestId],
    );
  }

  test.each(['before-headers', 'before-first-token'] as const)('a stall %s falls back when the TTFT deadline passes', async (stall) => {
    gw.mock.addScenario({ model: 'm-stall-primary', times: 1, behaviour: { stall } });
    const started = Date.now();
    const response = await postJson(gw, '/v1/chat/completions', ask('stall', { stream: true }));
    const elapsed = Date.now() - started;
    expect(sseData(response.text).at(-1)).toBe('[DONE]');
    // At least the TTFT deadline, and nowhere near the request deadline (8 s); generous for a loaded machine.
    expect(elapsed).toBeGreaterThanOrEqual(TTFT_MS - 20);
    expect(elapsed).toBeLessThan(4_000);
    const attempts = await attemptsOf(gw, response.headers.get('x-request-id')!);
    expect(attempts.map((a) => [a.deploymentId, a.outcome, a.errorClass, a.deadline])).toEqual([
      ['stall-primary', 'failed', 'timeout', 'ttft'],
      ['stall-backup', 'success', null, null],
    ]);
    expect(attempts[0].usage.output).toBe(0);
    // The stalled upstream call was cancelled, not left hanging.
    await waitUntil(() => callsTo(gw, 'm-stall-primary')[0]?.outcome === 'aborted', 2_000, 'upstream abort');
  });

  test('an alias can shorten the TTFT deadline for itself', async () => {
    gw.mock.addScenario({ model: 'm-slowstart-primary', times: 1, behaviour: { ttftMs: 400 } });
    const response = await postJson(gw, '/v1/chat/completions', ask('alias-ttft', { stream: true }));
    expect(sseData(response.text).at(-1)).toBe('[DONE]');
    const attempts = await attemptsOf(gw, response.headers.get('x-request-id')!);
    expect(attempts.map((a) => [a.deploymentId, a.deadline])).toEqual([['slowstart-primary', 'ttft'], ['slowstart-backup', null]]);
  });

  test('a stall after the first token ends the stream with an idle-timeout error event: no [DONE], no fallback', async () => {
    gw.mock.addScenario({ model: 'm-idle-primary', times: 1, behaviour: { stall: 'mid-stream' } });
    const response = await postJson(gw, '/v1/chat/completions', ask('idle', { stream: true }));
    const frames = sseData(response.text);
    expect(frames).not.toContain('[DONE]');
    expect(frames.filter((f) => f !== '[DONE]').some((f) => JSON.parse(f).choices?.[0]?.delta?.content)).toBe(true);
    expect(JSON.parse(frames.at(-1)!).error).toMatchObject({ code: 'stream_idle_timeout' });
    expect(gw.mock.requests().map((r) => r.model)).toEqual(['m-idle-primary']);
    const requestId = response.headers.get('x-request-id')!;
    const [attempt] = await attemptsOf(gw, requestId);
    expect(attempt).toMatchObject({ outcome: 'failed_partial', errorClass: 'timeout', deadline: 'idle', usageEvidence: 'counted' });
    expect(attempt.usage.output).toBeGreaterThan(0);
    expect(await completionOf(gw, requestId)).toMatchObject({ status: 'failed', errorCode: 'stream_idle_timeout', httpStatus: 504 });
  });

  test('a mid-stream failure ends the stream with an error event, no [DONE], no fallback, and bills what was relayed', async () => {
    // Gaps between chunks so the first ones reach the gateway before the connection is torn down.
    gw.mock.addScenario({ model: 'm-broken-primary', times: 1, behaviour: { dropAfterChunks: 4, chunkGapMs: 20 } });
    const response = await postJson(gw, '/v1/chat/completions', ask('broken', { stream: true }));
    const frames = sseData(response.text);
    expect(frames).not.toContain('[DONE]');
    expect(JSON.parse(frames.at(-1)!).error).toMatchObject({ code: 'upstream_error' });
    expect(gw.mock.requests().map((r) => r.model)).toEqual(['m-broken-primary']);
    const requestId = response.headers.get('x-request-id')!;
    expect((await attemptsOf(gw, requestId)).map((a) => [a.outcome, a.errorClass])).toEqual([['failed_partial', 'connection']]);
    const rows = await ledgerRows(requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ outcome: 'failed_partial', usage_evidence: 'counted' });
    expect(Number(rows[0].output_tokens)).toBeGreaterThan(0);
  });

  test('malformed SSE is an error for the caller and a failure for the breaker', async () => {
    gw.mock.addScenario({ model: 'm-malformed-primary', behaviour: { malformedAfterChunks: 3 } });
    for (let i = 0; i < 5; i++) {
      const response = await postJson(gw, '/v1/chat/completions', ask('malformed', { stream: true }));
      const frames = sseData(response.text);
      expect(frames).not.toContain('[DONE]');
      expect(JSON.parse(frames.at(-1)!).error).toMatchObject({ code: 'upstream_error' });
      const [attempt] = await attemptsOf(gw, response.headers.get('x-request-id')!);
      expect(attempt).toMatchObject({ deploymentId: 'malformed-primary', outcome: 'failed_partial', errorClass: 'malformed_response' });
    }
    await waitUntil(async () => (await breakerEvents(gw, 'malformed-primary')).length > 0, 2_000, 'BreakerOpened');
    expect((await breakerEvents(gw, 'malformed-primary'))[0]).toMatchObject({ type: 'BreakerOpened', data: { reason: 'consecutive_failures' } });
    // Malformed before the first token is still a clean fallback.
    gw.mock.addScenario({ model: 'm-malformed-backup', times: 1, behaviour: { malformedAfterChunks: 0 } });
    gw.mock.addScenario({ model: 'm-malformed-backup', times: 1, behaviour: {} });
    const response = await postJson(gw, '/v1/chat/completions', ask('malformed', { stream: true }));
    expect(sseData(response.text).at(-1)).toBe('[DONE]');
    const attempts = await attemptsOf(gw, response.headers.get('x-request-id')!);
    // The primary's breaker is open: the backup is retried once (it is the only route left).
    expect(attempts.map((a) => [a.deploymentId, a.outcome, a.errorClass])).toEqual([
      ['malformed-backup', 'failed', 'malformed_response'],
      ['malformed-backup', 'success', null],
    ]);
  });

  test('a client disconnect aborts the upstream call within 100 ms and the ledger holds the partial usage', async () => {
    gw.mock.addScenario({ model: 'm-gone-primary', times: 1, behaviour: { chunks: 200, chunkGapMs: 20 } });
    const { response, abort } = await openRequest(gw.url, gw.key, ask('gone', { stream: true }));
    const requestId = response.headers['x-request-id'] as string;
    let received = 0;
    await new Promise<void>((resolve) => {
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > 600) resolve();
      });
    });
    const abortedAt = Date.now();
    abort();
    await waitUntil(() => callsTo(gw, 'm-gone-primary')[0]?.outcome === 'aborted', 2_000, 'upstream abort');
    // The bound the issue demands; everything runs in one process on a shared machine, hence no margin below it.
    expect(callsTo(gw, 'm-gone-primary')[0].endedAt! - abortedAt).toBeLessThan(100);
    await waitUntil(async () => (await completionOf(gw, requestId)) !== undefined, 3_000, 'RequestCompleted');
    expect(await completionOf(gw, requestId)).toMatchObject({ status: 'cancelled', errorCode: 'client_disconnected' });
    const rows = await ledgerRows(requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ attempt: 1, outcome: 'cancelled', usage_evidence: 'counted' });
    expect(Number(rows[0].output_tokens)).toBeGreaterThan(0);
    expect(Number(rows[0].cost_usd)).toBeGreaterThan(0);
    expect(callsTo(gw, 'm-gone-backup')).toHaveLength(0);
  });

  test('the absolute stream lifetime ends a long stream with its own error, even while chunks keep coming', async () => {
    gw.mock.addScenario({ model: 'm-long-primary', times: 1, behaviour: { chunks: 400, chunkGapMs: 20 } });
    const started = Date.now();
    const response = await postJson(gw, '/v1/chat/completions', ask('long', { stream: true }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(STREAM_MS - 20);
    const frames = sseData(response.text);
    expect(frames).not.toContain('[DONE]');
    expect(JSON.parse(frames.at(-1)!).error).toMatchObject({ code: 'stream_timeout' });
    const [attempt] = await attemptsOf(gw, response.headers.get('x-request-id')!);
    expect(attempt).toMatchObject({ outcome: 'failed_partial', deadline: 'stream' });
    await waitUntil(() => callsTo(gw, 'm-long-primary')[0]?.outcome === 'aborted', 2_000, 'upstream abort');
  });
});

/**
 * A slow consumer, on a gateway of its own: filling the socket buffers between the gateway and a client
 * that does not read takes megabytes of SSE, relayed in this one process with the mock and the client,
 * so on a loaded machine it can take longer than the short stream lifetime the suite above uses. Here
 * only the write-progress deadline is short.
 */
describe('resilience: a client that stops reading', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      yaml: resilienceYaml([
        // The mock writes ~10 MB in one synchronous burst in this process: give the first token time.
        { name: 'firehose', routes: [{ id: 'firehose-primary' }, { id: 'firehose-backup' }], policy: '      ttftTimeoutMs: 10000' },
      ]),
      environment: {
        resilience: {
          deadlines: { requestTimeoutMs: 30_000, ttftTimeoutMs: TTFT_MS, idleTimeoutMs: 30_000, streamTimeoutMs: 60_000, writeProgressTimeoutMs: WRITE_PROGRESS_MS },
          retry: { baseBackoffMs: 10, maxBackoffMs: 50 },
        },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
  });

  test('a client that stops reading is cut off at the write-progress deadline; upstream cancelled, usage settled, permits back', async () => {
    // Half of 100,000 chunks (~10 MB of SSE) at once, then the upstream holds the stream open: far more
    // than the socket buffers between the gateway and a client that does not read.
    gw.mock.addScenario({ model: 'm-firehose-primary', times: 1, behaviour: { chunks: 100_000, stall: 'mid-stream' } });
    const { response } = await openRequest(gw.url, gw.key, ask('firehose', { stream: true }));
    const requestId = response.headers['x-request-id'] as string;
    response.pause(); // never read: the socket buffers fill and writes stop draining
    await waitUntil(async () => (await completionOf(gw, requestId)) !== undefined, 30_000, 'RequestCompleted');
    expect(await completionOf(gw, requestId)).toMatchObject({ status: 'cancelled', errorCode: 'slow_consumer', httpStatus: 499 });
    const [attempt] = (await attemptsOf(gw, requestId)) as Array<AttemptFinished['data']>;
    expect(attempt).toMatchObject({ outcome: 'cancelled', errorClass: 'cancelled', deadline: 'write_progress' });
    expect(attempt.usage.output).toBeGreaterThan(0);
    await waitUntil(() => callsTo(gw, 'm-firehose-primary')[0]?.outcome === 'aborted', 2_000, 'upstream abort');
    await waitUntil(() => Object.values(permitsHeld(gw)).every((n) => n === 0), 2_000, 'permits released');
    response.destroy();
  }, 60_000);
});
