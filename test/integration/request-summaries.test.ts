import { Logger } from '@nestjs/common';
import type { AttemptFinished, RequestAdmitted, RequestCompleted, RequestRejected, RequestServedFromCache } from '../../events/request-events.js';
import { PageTokenError } from '../../modules/audit/page-token.js';
import { RequestSearch } from '../../modules/audit/request-search.js';
import { RequestSummariesProjection } from '../../projections/request-summaries/index.js';
import type { AppendRequest } from '../../src/kernel/event-store/event-store.js';
import { START } from '../../src/kernel/event-store/log-position.js';
import { uuidv7 } from '../../src/kernel/ids.js';
import { ProjectionRunner } from '../../src/kernel/projections/projection-runner.js';
import { storeTargets } from '../support/event-store-targets.js';
import { appendAll } from '../support/ledger-events.js';

Logger.overrideLogger(['error']);

type Usage = AttemptFinished['data']['usage'];
const usage = (input: number, output: number): Usage => ({ input, cachedInput: 0, cacheWrite: 0, output, reasoning: 0 });
const who = (n: number) => ({ tenantId: n % 3 === 0 ? 'globex' : 'acme', keyId: n % 3 === 0 ? 'globex-app' : `acme-${n % 2 ? 'web' : 'batch'}`, alias: n % 4 === 0 ? 'embed' : 'chat' });
const id = (n: number) => `r${String(n).padStart(5, '0')}`;

function event(type: string, data: Record<string, unknown>) {
  return { eventId: uuidv7(), type, data };
}

function admitted(n: number): ReturnType<typeof event> {
  const data: RequestAdmitted['data'] = {
    requestId: id(n), ...who(n), aliasVersion: 1, snapshotPosition: 1, clientFormat: 'openai', operation: 'chat', stream: false,
    estimatedInputTokens: 10, reservedOutputTokens: 100, idempotencyKey: null,
  };
  return event('RequestAdmitted', data);
}

function attempt(n: number, attemptNo: number, outcome: AttemptFinished['data']['outcome'], tokens: Usage, total: string) {
  const data: AttemptFinished['data'] = {
    requestId: id(n), attempt: attemptNo, ...who(n), deploymentId: attemptNo === 1 ? 'primary' : 'backup', providerId: 'mock', model: 'm',
    outcome, errorClass: outcome === 'success' ? null : 'overloaded', httpStatus: outcome === 'success' ? 200 : 503, usage: tokens, usageEvidence: 'provider',
    cost: { input: total, cachedInput: '0', cacheWrite: '0', output: '0', total, currency: 'USD' }, priceVersion: 1, latencyMs: 40 * attemptNo, ttftMs: null,
    providerRequestId: null, routing: { strategy: 'priority', candidates: ['primary', 'backup'], reason: 'first' },
  };
  return event('AttemptFinished', data);
}

function completed(n: number, status: RequestCompleted['data']['status'], tokens: Usage, costUsd: string, attempts: number, latencyMs: number, cacheHit = false) {
  const data: RequestCompleted['data'] = {
    requestId: id(n), status, httpStatus: status === 'success' ? 200 : 502, errorCode: status === 'success' ? null : 'upstream_unavailable',
    fallbackDepth: Math.max(0, attempts - 1), cacheHit, totals: { usage: tokens, costUsd, attempts, latencyMs },
  };
  return event('RequestCompleted', data);
}

function rejected(n: number, withPrincipal: boolean) {
  const data: RequestRejected['data'] = {
    requestId: id(n), reason: 'rate limit', status: 429, code: 'rate_limited', ...(withPrincipal ? { ...who(n), operation: 'chat' as const, scope: 'key.rpm' } : {}),
  };
  return event('RequestRejected', data);
}

function cacheHit(n: number) {
  const data: RequestServedFromCache['data'] = {
    requestId: id(n), ...who(n), aliasVersion: 1, sourceRequestId: id(1), deploymentId: 'primary', providerId: 'mock', model: 'm', priceVersion: 1,
    usage: usage(12, 7), savedCostUsd: '0.0004',
  };
  return event('RequestServedFromCache', data);
}

/** Request n's events in stream order, by its shape (n mod 6). */
function story(n: number): Array<ReturnType<typeof event>> {
  switch (n % 6) {
    case 0: return [admitted(n), attempt(n, 1, 'failed', usage(0, 0), '0'), attempt(n, 2, 'success', usage(100, 20), '0.001000000001'),
      completed(n, 'success', usage(100, 20), '0.001000000001', 2, 95)];
    case 1: return [admitted(n), attempt(n, 1, 'success', usage(50 + n, 10), '0.0005'), completed(n, 'success', usage(50 + n, 10), '0.0005', 1, 41)];
    case 2: return [rejected(n, n % 4 === 2)];
    case 3: return [admitted(n), cacheHit(n), completed(n, 'success', usage(12, 7), '0', 0, 3, true)];
    case 4: return [admitted(n), attempt(n, 1, 'failed', usage(0, 0), '0'), attempt(n, 2, 'failed_partial', usage(30, 5), '0.0002'),
      completed(n, 'failed', usage(30, 5), '0.0002', 2, 120)];
    default: return [admitted(n), attempt(n, 1, 'success', usage(9, 9), '0.0001')]; // still in flight
  }
}

/** Appends the events of `requests` one event per append, interleaved across requests: pages then split stories anywhere. */
function interleaved(requests: readonly number[]): AppendRequest[] {
  const stories = requests.map((n) => ({ n, events: story(n) }));
  const appends: AppendRequest[] = [];
  for (let step = 0; stories.some((s) => s.events.length > step); step++) {
    for (const s of stories) if (s.events[step]) appends.push({ streamId: `request-${id(s.n)}`, events: [s.events[step]], expectedVersion: 'any' });
  }
  return appends;
}

describe.each(storeTargets())('request summaries ($name)', ({ open }) => {
  test('one row per request from its events, whatever the page boundaries; a rebuild reproduces the table row for row; search pages it', async () => {
    const fixture = await open();
    const { database, store } = fixture;
    // Pages of 3 events: every request's story is cut across pages, in every place.
    const live = new ProjectionRunner(store, database, { pollIntervalMs: 50, listen: false, batchSize: 3, runDurable: true });
    live.addDurable(new RequestSummariesProjection());
    const snapshot = () => database.query(`SELECT *, cost_usd::text AS cost_usd, at::text AS at FROM request_summaries ORDER BY request_id`);
    try {
      await live.start();
      await appendAll(store, interleaved(Array.from({ length: 30 }, (_, i) => i + 1)), 7);
      await live.catchUp(['request-summaries']);
      // The in-flight ones complete later, in other pages.
      await appendAll(store, [5, 11, 17, 23, 29].map((n) => ({ streamId: `request-${id(n)}`, events: [completed(n, 'success', usage(9, 9), '0.0001', 1, 60)], expectedVersion: 'any' })));
      await appendAll(store, interleaved(Array.from({ length: 18 }, (_, i) => i + 31)), 5);
      await live.catchUp(['request-summaries']);
      const rows = await snapshot() as Array<Record<string, unknown>>;
      expect(rows).toHaveLength(48);
      const row = (n: number) => rows.find((r) => r.request_id === id(n))!;

      // Failed over then served: the completion's totals.
      expect(row(6)).toMatchObject({ tenant_id: 'globex', key_id: 'globex-app', alias: 'chat', status: 'success', http_status: 200, error_code: null, attempts: 2, latency_ms: 95, cost_usd: '0.001000000001', cache_hit: false });
      expect(String(row(6).input_tokens)).toBe('100');
      // Rejected with and without the principal on the event (older events carry none).
      expect(row(2)).toMatchObject({ status: 'rejected', http_status: 429, error_code: 'rate_limited', tenant_id: 'acme', attempts: 0, latency_ms: null });
      expect(row(8)).toMatchObject({ status: 'rejected', tenant_id: null, key_id: null, alias: null });
      // A cache hit: no attempt, nothing billed.
      expect(row(3)).toMatchObject({ status: 'success', cache_hit: true, attempts: 0, cost_usd: '0.000000000000' });
      expect(row(10)).toMatchObject({ status: 'failed', error_code: 'upstream_unavailable', attempts: 2, cost_usd: '0.000200000000' });
      // Completed in a later page than its attempt.
      expect(row(5)).toMatchObject({ status: 'success', attempts: 1, latency_ms: 60, cost_usd: '0.000100000000' });
      // Still in flight: what its attempts add up to so far.
      expect(row(35)).toMatchObject({ status: 'incomplete', attempts: 1, latency_ms: null, cost_usd: '0.000100000000' });

      // Rebuilt in pages of 500 (every story in one page): the same rows, nothing to replace.
      const rebuilder = new ProjectionRunner(store, database, { pollIntervalMs: 50, listen: false, batchSize: 500, runDurable: true });
      rebuilder.addDurable(new RequestSummariesProjection());
      const rebuilt = await rebuilder.rebuild('request-summaries');
      expect(rebuilt.replaced).toEqual([{ table: 'request_summaries', removed: 0, added: 0 }]);
      expect(await snapshot()).toEqual(rows);
      await rebuilder.stop();

      // Search: pages join up exactly, newest first, under every filter.
      const search = new RequestSearch(database);
      const all = async (filter: Parameters<RequestSearch['page']>[0]) => {
        const seen: string[] = [];
        let pageToken: string | undefined;
        for (let pages = 0; pages < 50; pages++) {
          const page = await search.page({ ...filter, pageToken });
          expect(page.requests.length).toBeLessThanOrEqual(filter.limit);
          seen.push(...page.requests.map((r) => r.requestId));
          if (page.nextPageToken === null) return seen;
          pageToken = page.nextPageToken;
        }
        throw new Error('no last page');
      };
      const ordered = async (where: string, params: unknown[] = []) =>
        (await database.query<{ request_id: string }>(`SELECT request_id FROM request_summaries ${where} ORDER BY at DESC, request_id DESC`, params)).map((r) => r.request_id);
      expect(await all({ limit: 7 })).toEqual(await ordered(''));
      expect(await all({ limit: 4, tenantId: 'globex' })).toEqual(await ordered(`WHERE tenant_id = 'globex'`));
      expect(await all({ limit: 3, keyId: 'acme-web', status: 'success' })).toEqual(await ordered(`WHERE key_id = 'acme-web' AND status = 'success'`));
      expect(await all({ limit: 5, alias: 'embed' })).toEqual(await ordered(`WHERE alias = 'embed'`));
      expect(await all({ limit: 2, status: 'rejected' })).toHaveLength(8);
      const [middle] = await database.query<{ at: Date }>(`SELECT at FROM request_summaries ORDER BY at LIMIT 1 OFFSET 30`);
      expect(await all({ limit: 6, from: new Date(middle.at) })).toEqual(await ordered(`WHERE at >= $1`, [middle.at]));
      expect(await all({ limit: 6, to: new Date(middle.at) })).toEqual(await ordered(`WHERE at < $1`, [middle.at]));
      expect(await all({ limit: 5, tenantId: 'nobody' })).toEqual([]);
      const first = await search.page({ limit: 1 });
      expect(first.requests[0]).toEqual({
        requestId: expect.any(String), at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/), tenantId: expect.any(String),
        keyId: expect.any(String), alias: expect.any(String), operation: 'chat', status: expect.any(String), httpStatus: expect.any(Number), errorCode: null,
        cacheHit: expect.any(Boolean), attempts: expect.any(Number), latencyMs: expect.any(Number), inputTokens: expect.any(Number), outputTokens: expect.any(Number),
        costUsd: expect.stringMatching(/^\d+\.\d{12}$/),
      });
      // A token is opaque: edited or made up, it is refused.
      for (const forged of ['abc', Buffer.from('2026-01-01T00:00:00.000000Z|x|y').toString('base64url'), `${first.nextPageToken}x`]) {
        await expect(search.page({ limit: 5, pageToken: forged })).rejects.toThrow(PageTokenError);
      }
    } finally {
      await live.stop();
      await fixture.close();
    }
  }, 90_000);

  test('a request admitted in one page and completed in a later one gets the row it gets when its events share a page; a page holds both kinds', async () => {
    const fixture = await open();
    const { database, store } = fixture;
    const snapshot = () => database.query(`SELECT *, cost_usd::text AS cost_usd, at::text AS at FROM request_summaries ORDER BY request_id`);
    const projection = new RequestSummariesProjection();
    const apply = async (pages: ReadonlyArray<Awaited<ReturnType<typeof store.readAll>>['events']>) => {
      for (const page of pages) await database.transaction((tx) => projection.handle(tx, page));
    };
    try {
      const stories = new Map([101, 102, 103, 104, 105, 106].map((n) => [n, story(n)]));
      const append = (n: number, events: Array<ReturnType<typeof event>>): AppendRequest => ({ streamId: `request-${id(n)}`, events, expectedVersion: 'any' });
      // The first page: three admissions whose requests go on in the next, a request told whole, a rejection.
      const first = [append(101, stories.get(101)!.slice(0, 1)), append(102, stories.get(102)!.slice(0, 1)), append(106, stories.get(106)!.slice(0, 1)),
        append(103, stories.get(103)!), append(104, stories.get(104)!)];
      // The second: the rest of those three (101 completed after its attempt) beside a request told whole.
      const second = [append(101, stories.get(101)!.slice(1)), append(102, stories.get(102)!.slice(1)), append(106, stories.get(106)!.slice(1)),
        append(105, stories.get(105)!), append(101, [completed(101, 'success', usage(9, 9), '0.0001', 1, 60)])];
      await appendAll(store, [...first, ...second], 1);
      const { events } = await store.readAll(START, { limit: 1_000 });
      const boundary = first.reduce((sum, a) => sum + a.events.length, 0);
      expect(events).toHaveLength(boundary + second.reduce((sum, a) => sum + a.events.length, 0));

      await apply([events]);
      const together = await snapshot() as Array<Record<string, unknown>>;
      expect(together.map((r) => [r.request_id, r.status])).toEqual([
        [id(101), 'success'], [id(102), 'success'], [id(103), 'success'], [id(104), 'rejected'], [id(105), 'success'], [id(106), 'failed'],
      ]);
      await database.query(`DELETE FROM request_summaries`);
      await apply([events.slice(0, boundary), events.slice(boundary)]);
      expect(await snapshot()).toEqual(together);
      // A first page applied twice would be a runner's fault: its rows are refused, not merged a second time.
      await expect(apply([events.slice(0, boundary)])).rejects.toThrow();
    } finally {
      await fixture.close();
    }
  }, 60_000);

  test('names that are syntax elsewhere (quotes, commas, line breaks, a lone \\., backslashes) and outsized counts are stored as they are: the bulk load (embedded COPY) writes the rows the JSON statement writes', async () => {
    const fixture = await open();
    const { database, store } = fixture;
    const snapshot = () => database.query(`SELECT *, cost_usd::text AS cost_usd, input_tokens::text AS input_tokens, at::text AS at FROM request_summaries ORDER BY request_id`);
    const hostile = ['a "quoted", name', 'line\nbreak\r\nand more', '\\.', '\\N', '', ' spaced ', 'back\\slash \\"', 'é日本語🙂', "o'brien,\"\"", 'NULL'];
    try {
      const appends: AppendRequest[] = hostile.map((name, i) => {
        const n = 200 + i;
        const named = (e: ReturnType<typeof event>) => ({ ...e, data: { ...e.data, tenantId: name, keyId: `${name}-key`, alias: name } });
        const admittedEvent = named(admitted(n));
        const attemptEvent = named(attempt(n, 1, 'success', usage(i === 0 ? 1e308 : 7, 3), '0.000000000001'));
        const events = i % 2 === 0 ? [admittedEvent, attemptEvent] : [admittedEvent, attemptEvent, completed(n, 'failed', usage(7, 3), '0.000000000001', 1, 10)];
        return { streamId: `request-${id(n)}`, events, expectedVersion: 'any' };
      });
      await appendAll(store, appends, 1);
      const { events } = await store.readAll(START, { limit: 1_000 });
      const projection = new RequestSummariesProjection();

      // As the adapter writes them (COPY on the embedded engine), then through the JSON statement alone.
      await database.transaction((tx) => projection.handle(tx, events));
      const loaded = await snapshot() as Array<Record<string, unknown>>;
      expect(loaded.map((r) => r.tenant_id)).toEqual(hostile);
      expect(loaded.map((r) => r.alias)).toEqual(hostile);
      expect(loaded[0].input_tokens).toBe(`1${'0'.repeat(308)}`);
      expect(loaded[1]).toMatchObject({ status: 'failed', error_code: 'upstream_unavailable', latency_ms: 10 });
      expect(loaded[0]).toMatchObject({ status: 'incomplete', error_code: null, http_status: null, latency_ms: null });
      await database.query(`DELETE FROM request_summaries`);
      await database.transaction((tx) => projection.handle({ query: (sql, params, name) => tx.query(sql, params, name) }, events));
      expect(await snapshot()).toEqual(loaded);
    } finally {
      await fixture.close();
    }
  }, 60_000);
});
