import { Logger } from '@nestjs/common';
import type { AttemptFinished } from '../../events/request-events.js';
import type { DurabilityProfile } from '../../modules/inference/pipeline/durability.js';
import { RequestJournal } from '../../modules/inference/pipeline/request-journal.js';
import type { Database } from '../../src/kernel/database/database.js';
import { GroupCommitter } from '../../src/kernel/event-store/group-committer.js';
import { SqlEventStore } from '../../src/kernel/event-store/sql-event-store.js';
import { uuidv7 } from '../../src/kernel/ids.js';
import { type StoreFixture, storeTargets } from '../support/event-store-targets.js';

// The committer warns about each retried batch; the retries are the point here.
Logger.overrideLogger(['error']);

/** The request journal's commits per durability profile (DESIGN §7), and its retry after an ambiguous failure. */
describe.each(storeTargets().map((t) => [t.name, t] as const))('request journal on %s', (_name, target) => {
  let fx: StoreFixture;
  beforeAll(async () => {
    fx = await target.open();
  });
  afterAll(async () => {
    await fx.close();
  });

  /**
   * The store over a database whose first `failures` append statements commit and then report a lost
   * connection — the ambiguous failure of a COMMIT whose acknowledgement never arrived.
   */
  function committerOver(failures = 0): { committer: GroupCommitter; lost: () => number } {
    let lost = 0;
    const database = fx.database;
    const flaky = {
      kind: database.kind,
      maxConcurrentTransactions: database.maxConcurrentTransactions,
      query: async (sql: string, params?: readonly unknown[], name?: string) => {
        const rows = await database.query(sql, params, name);
        if (sql.includes('INSERT INTO events') && lost < failures) {
          lost++;
          throw new Error('Connection terminated unexpectedly');
        }
        return rows;
      },
    } as unknown as Database;
    const committer = new GroupCommitter(new SqlEventStore(flaky), { maxBatchEvents: 100, maxBatchBytes: 1 << 20, maxDelayMs: 1, maxInFlight: 2 });
    return { committer, lost: () => lost };
  }

  function journal(committer: GroupCommitter, profile: DurabilityProfile): RequestJournal {
    return RequestJournal.forKey(committer, profile, 'node-test', uuidv7(), 'key-1');
  }

  async function serve(j: RequestJournal): Promise<void> {
    await j.admit({
      requestId: j.requestId, tenantId: 't1', keyId: 'key-1', alias: 'chat', aliasVersion: 3, snapshotPosition: 42,
      clientFormat: 'openai', operation: 'chat', stream: false, estimatedInputTokens: 10, reservedOutputTokens: 20, idempotencyKey: null,
    });
  }

  const attempt = (requestId: string, n: number) =>
    ({
      requestId, attempt: n, outcome: n === 1 ? 'failed' : 'success', cost: { total: n === 1 ? '0.000000000000' : '0.000001000000' },
      usage: { input: 10 * n, cachedInput: n, cacheWrite: 0, output: 5 * n, reasoning: 0 },
    }) as unknown as AttemptFinished['data'];
  const completed = (_requestId: string) => ({ status: 'success' as const, httpStatus: 200, errorCode: null, cacheHit: false });

  async function stream(requestId: string) {
    const events = await fx.store.readStream(`request-${requestId}`);
    return { types: events.map((e) => e.type), versions: events.map((e) => e.streamVersion), transactions: new Set(events.map((e) => e.transactionId)).size };
  }

  test('default: nothing before the end, then admitted, attempts and completion in one append (one transaction)', async () => {
    const { committer } = committerOver();
    const j = journal(committer, 'default');
    await serve(j);
    j.recordAttempt(attempt(j.requestId, 1));
    j.recordAttempt(attempt(j.requestId, 2));
    expect((await stream(j.requestId)).types).toEqual([]);
    await j.complete(completed(j.requestId));
    expect(await stream(j.requestId)).toEqual({
      types: ['RequestAdmitted', 'AttemptFinished', 'AttemptFinished', 'RequestCompleted'], versions: [1, 2, 3, 4], transactions: 1,
    });
  });

  test('settlement: RequestCompleted carries the sum of the attempts recorded, and the fallback depth', async () => {
    const { committer } = committerOver();
    const j = journal(committer, 'default');
    await serve(j);
    j.recordAttempt(attempt(j.requestId, 1));
    j.recordAttempt(attempt(j.requestId, 2));
    await j.complete(completed(j.requestId));
    const events = await fx.store.readStream(`request-${j.requestId}`);
    expect(events.at(-1)?.data).toMatchObject({
      requestId: j.requestId, status: 'success', fallbackDepth: 1,
      totals: { usage: { input: 30, cachedInput: 3, cacheWrite: 0, output: 15, reasoning: 0 }, costUsd: '0.000001000000', attempts: 2 },
    });
  });

  test('strict: RequestAdmitted is committed before dispatch, the rest continues at version 2', async () => {
    const { committer } = committerOver();
    const j = journal(committer, 'strict');
    await serve(j);
    expect((await stream(j.requestId)).types).toEqual(['RequestAdmitted']);
    j.recordAttempt(attempt(j.requestId, 1));
    await j.complete(completed(j.requestId));
    expect(await stream(j.requestId)).toEqual({ types: ['RequestAdmitted', 'AttemptFinished', 'RequestCompleted'], versions: [1, 2, 3], transactions: 2 });
  });

  test('async: complete resolves before the commit; the one append lands in the background', async () => {
    const { committer } = committerOver();
    const j = journal(committer, 'async');
    await serve(j);
    j.recordAttempt(attempt(j.requestId, 1));
    await j.complete(completed(j.requestId));
    expect(committer.pending).toBe(1); // still queued when the caller moved on
    await committer.drain();
    expect((await stream(j.requestId)).types).toEqual(['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']);
  });

  test.each(['default', 'strict'] as const)('%s: commits that succeed but report a lost connection are retried once stored, never twice', async (profile) => {
    const { committer, lost } = committerOver(profile === 'strict' ? 2 : 1);
    const j = journal(committer, profile);
    await serve(j);
    j.recordAttempt(attempt(j.requestId, 1));
    j.recordAttempt(attempt(j.requestId, 2));
    await j.complete(completed(j.requestId));
    expect(lost()).toBe(profile === 'strict' ? 2 : 1);
    // Stored exactly once: the retry found its pinned ids and returned their positions.
    const after = await stream(j.requestId);
    expect(after.types).toEqual(['RequestAdmitted', 'AttemptFinished', 'AttemptFinished', 'RequestCompleted']);
    expect(after.versions).toEqual([1, 2, 3, 4]);
    const billed = await fx.database.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM events WHERE event_type = 'AttemptFinished' AND data->>'requestId' = $1`, [j.requestId],
    );
    expect(billed[0].n).toBe('2');
  });
});
