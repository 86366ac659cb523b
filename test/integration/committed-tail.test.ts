import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '../../src/kernel/database/database.js';
import { EVENTS_CHANNEL, type LogPosition, type NewEvent, type RecordedEvent, START, comparePositions } from '../../src/kernel/event-store/event-store.js';
import { GroupCommitter } from '../../src/kernel/event-store/group-committer.js';
import { SqlEventStore } from '../../src/kernel/event-store/sql-event-store.js';
import { uuidv7 } from '../../src/kernel/ids.js';
import { type StoreFixture, openStore } from '../support/event-store-targets.js';
import { seedEmbeddedDataDir } from '../support/pglite-template.js';

/**
 * The embedded store as the sole writer of its log: readers at the head take the newest events from memory.
 * What they are handed must be what a read of the log gives, event for event, under concurrent appends,
 * failed ones, control-plane appends and idempotent re-appends; and a reader that follows the head through
 * it must see the whole log, in order, with nothing skipped.
 */
describe('the embedded store reading its own newest events from memory', () => {
  let dir: string;
  let fx: StoreFixture;
  let tailed: SqlEventStore;
  let logReads: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-tail-'));
    await seedEmbeddedDataDir(dir);
    fx = await openStore(null, dir);
    tailed = new SqlEventStore(fx.database, undefined, { soleWriter: true, tailCapacity: 256 });
    logReads = 0;
    const query = fx.database.query.bind(fx.database) as Database['query'];
    fx.database.query = ((sql: string, params?: readonly unknown[], name?: string) => {
      if (name?.startsWith('switchyard_read_all')) logReads++;
      return query(sql, params, name);
    }) as Database['query'];
  });
  afterAll(async () => {
    await fx.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Payloads that jsonb stores differently from their text (key order, escapes, numbers), and hostile keys. */
  const payload = (n: number) => ({
    zeta: n, alpha: { b: [1, 2.5, -0.125, 1e21, 12345678901234567000], a: 'é\u2028"\\' }, __proto__key: { constructor: 'x' },
    ['__proto__']: { polluted: true }, cost: '0.000123000000', nested: { deep: { deeper: [null, true, false, ''] } },
  });
  const request = (n: number) => ({
    streamId: `request-${uuidv7()}`,
    expectedVersion: 'no-stream' as const,
    events: [
      { eventId: uuidv7(), type: 'RequestAdmitted', data: payload(n), metadata: { actor: `key:${n}` } },
      { eventId: uuidv7(), type: 'AttemptFinished', data: { n, usage: { input: n, output: 2 * n } } },
      { eventId: uuidv7(), type: 'RequestCompleted', data: { n } },
    ] as NewEvent[],
  });

  /** Follows the head as a projection does, through the tailed store, until told to stop and caught up. */
  async function follow(types: readonly string[] | undefined, stop: () => boolean): Promise<RecordedEvent[]> {
    const seen: RecordedEvent[] = [];
    let position: LogPosition = START;
    for (;;) {
      const page = await tailed.readAll(position, { limit: 50, types });
      seen.push(...page.events);
      expect(comparePositions(page.next, position)).toBeGreaterThanOrEqual(0);
      position = page.next;
      if (page.caughtUp) {
        if (stop()) return seen;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }

  async function logFrom(from: LogPosition, types?: readonly string[]): Promise<RecordedEvent[]> {
    const all: RecordedEvent[] = [];
    for (let position = from; ;) {
      const page = await fx.store.readAll(position, { limit: 500, types });
      all.push(...page.events);
      position = page.next;
      if (page.caughtUp) return all;
    }
  }

  test('followers at the head see exactly the log, under concurrent appends of every kind', async () => {
    const committer = new GroupCommitter(tailed, { maxBatchEvents: 60, maxBatchBytes: 1 << 20, maxDelayMs: 0, maxInFlight: 2 });
    let writing = true;
    const everything = follow(undefined, () => !writing);
    const controlPlane = follow(['AliasPublished'], () => !writing);
    const alias = `alias-${uuidv7()}`;
    let published = 0;
    let refused = 0;
    const writers = Array.from({ length: 6 }, async (_, w) => {
      for (let i = 0; i < 40; i++) {
        const n = w * 1000 + i;
        const r = request(n);
        if (i % 13 === 5) {
          // A payload the database refuses (jsonb holds no \u0000): its batch is split, it alone fails.
          r.events[2] = { type: 'RequestCompleted', data: { n, text: 'nul \u0000 here' } };
          await committer.append(r).then(() => undefined, () => refused++);
          continue;
        }
        const result = await committer.append(r);
        if (i % 9 === 3) {
          // An idempotent re-append (a retry after an ambiguous commit): stored already, nothing new.
          expect((await committer.append(r)).positions).toEqual(result.positions);
          // The same stream with other ids: refused as a wrong version, nothing appended.
          const other = { ...r, events: r.events.map((event) => ({ ...event, eventId: uuidv7() })) };
          await expect(committer.append(other)).rejects.toMatchObject({ name: 'WrongExpectedVersionError' });
        }
        expect(result.positions).toHaveLength(3);
        if (i % 10 === 7) {
          // The control plane's appends (and a breaker's) take the verdict statement: any version.
          await tailed.append({ streamId: alias, events: [{ type: 'AliasPublished', data: { version: ++published } }], expectedVersion: 'any' });
        }
        if (i % 4 === 1) {
          // Strict durability commits RequestAdmitted alone and the terminal events later, at version 3 here.
          await committer.append({ streamId: r.streamId, expectedVersion: 3, events: [{ type: 'RequestSettled', data: { n, later: true } }] });
        }
      }
    });
    await Promise.all(writers);
    writing = false;
    const [followed, aliases] = await Promise.all([everything, controlPlane]);

    const log = await logFrom(START);
    expect(refused).toBe(6 * 3); // i = 5, 18, 31 of each writer
    expect(followed.map((e) => e.globalPosition)).toEqual(log.map((e) => e.globalPosition));
    expect(followed).toEqual(log);
    expect(aliases).toEqual(log.filter((e) => e.type === 'AliasPublished'));
    expect(aliases).toHaveLength(published);
    expect(log.filter((e) => e.type === 'RequestSettled').every((e) => e.streamVersion === 4)).toBe(true);
    // The followers' reads were answered from memory: the log was read at the start, and whenever a follower
    // fell behind what memory holds (256 events here).
    expect(logReads).toBeLessThan(20);
  });

  test('a page from memory equals the log\'s page from the same position, stored form and recorded time included', async () => {
    const head = await tailed.readAll(START, { limit: 100_000 });
    const results = await Promise.all(Array.from({ length: 5 }, (_, n) => tailed.append(request(n))));
    const fromMemory = await tailed.readAll(head.next, { limit: 100 });
    const fromLog = await fx.store.readAll(head.next, { limit: 100 });
    expect(fromMemory.events.map((e) => e.globalPosition)).toEqual(results.flatMap((r) => r.positions));
    expect(fromMemory.events).toEqual(fromLog.events);
    expect(fromMemory.events[0].stored!.recordedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(fromMemory.caughtUp).toBe(true);
    // Its resume point is no later than the log's, and past every event read.
    expect(comparePositions(fromMemory.next, fromLog.next)).toBeLessThanOrEqual(0);
    const last = fromMemory.events[fromMemory.events.length - 1];
    expect(comparePositions(fromMemory.next, last)).toBeGreaterThan(0);
    // A page limited by size ends at its last event, like the log's.
    const small = await tailed.readAll(head.next, { limit: 4 });
    expect(small).toEqual(await fx.store.readAll(head.next, { limit: 4 }));
  });

  test('a reader woken by a commit\'s notification sees that commit, as a read of the log queued behind it does', async () => {
    // The engine announces the commit before the append's rows reach this thread: a read made then waits for the
    // append's result instead of finding nothing (a follower would otherwise wait for its retry).
    const head = await tailed.readAll(START, { limit: 100_000 });
    const seen: Array<Promise<number[]>> = [];
    const unlisten = await fx.database.listen(EVENTS_CHANNEL, () => {
      seen.push(tailed.readAll(head.next, { limit: 100 }).then((page) => page.events.map((event) => event.globalPosition)));
    });
    try {
      const appended = await tailed.append(request(1));
      await tailed.notify(['RequestAdmitted']);
      const [first] = await Promise.all(seen);
      expect(first).toEqual(appended.positions);
    } finally {
      await unlisten();
    }
  });

  test('a statement that fails without the database\'s word (a lost engine) makes memory start over from the log', async () => {
    const head = await tailed.readAll(START, { limit: 100_000 });
    const query = fx.database.query;
    fx.database.query = ((sql: string, params?: readonly unknown[], name?: string) => {
      if (name?.startsWith('switchyard_append')) {
        fx.database.query = query;
        return Promise.reject(new Error('the engine\'s thread exited'));
      }
      return query(sql, params, name);
    }) as Database['query'];
    await expect(tailed.append(request(7))).rejects.toThrow('exited');
    const appended = await tailed.append(request(8));
    const before = logReads;
    const page = await tailed.readAll(head.next, { limit: 100 });
    expect(logReads).toBe(before + 1); // nothing held: the log answered, and gave memory its horizon again
    expect(page.events.map((e) => e.globalPosition)).toEqual(appended.positions);
    expect(page).toEqual(await fx.store.readAll(head.next, { limit: 100 })); // (the plain store's read counts too)
    const next = await tailed.append(request(9));
    const settled = logReads;
    expect((await tailed.readAll(page.next, { limit: 100 })).events.map((e) => e.globalPosition)).toEqual(next.positions);
    expect(logReads).toBe(settled); // held again: answered from memory
  });

  test('a reader further back than memory holds reads the log, and gets the same events', async () => {
    for (let round = 0; round < 4; round++) await Promise.all(Array.from({ length: 40 }, (_, n) => tailed.append(request(n))));
    const before = logReads;
    const fromStart = await tailed.readAll(START, { limit: 300 });
    expect(logReads).toBe(before + 1);
    expect(fromStart).toEqual(await fx.store.readAll(START, { limit: 300 }));
  });
});
