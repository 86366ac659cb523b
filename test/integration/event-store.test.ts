import pg from 'pg';
import { IdempotencyConflictError, WrongExpectedVersionError } from '../../src/kernel/event-store/errors.js';
import { EVENTS_CHANNEL, type LogPosition, START } from '../../src/kernel/event-store/event-store.js';
import { GroupCommitter } from '../../src/kernel/event-store/group-committer.js';
import { uuidv7 } from '../../src/kernel/ids.js';
import { type StoreFixture, storeTargets } from '../support/event-store-targets.js';

describe.each(storeTargets().map((t) => [t.name, t] as const))('event store on %s', (name, target) => {
  let fx: StoreFixture;
  beforeAll(async () => {
    fx = await target.open();
  });
  afterAll(async () => {
    await fx.close();
  });

  const event = (type = 'Thing', data: unknown = { n: 1 }) => ({ type, data, metadata: { actor: 'test' } });

  test('appends with expected versions and rejects conflicts with a typed error', async () => {
    const stream = `thing-${uuidv7()}`;
    const first = await fx.store.append({ streamId: stream, events: [event(), event()], expectedVersion: 'no-stream' });
    expect(first.nextExpectedVersion).toBe(2);
    await expect(fx.store.append({ streamId: stream, events: [event()], expectedVersion: 'no-stream' })).rejects.toBeInstanceOf(
      WrongExpectedVersionError,
    );
    const stale = fx.store.append({ streamId: stream, events: [event()], expectedVersion: 1 });
    await expect(stale).rejects.toMatchObject({ name: 'WrongExpectedVersionError', actual: 2, expected: 1 });
    await expect(fx.store.append({ streamId: `${stream}-x`, events: [event()], expectedVersion: 'stream-exists' })).rejects.toBeInstanceOf(
      WrongExpectedVersionError,
    );
    await fx.store.append({ streamId: stream, events: [event()], expectedVersion: 2 });
    await fx.store.append({ streamId: stream, events: [event()], expectedVersion: 'any' });
    const read = await fx.store.readStream(stream);
    expect(read.map((e) => e.streamVersion)).toEqual([1, 2, 3, 4]);
    expect(read[0].metadata).toEqual({ actor: 'test' });
  });

  test('several streams are read in one call, each in version order; a stream without events is left out', async () => {
    const [a, b, none] = [`thing-${uuidv7()}`, `thing-${uuidv7()}`, `thing-${uuidv7()}`];
    await fx.store.append({ streamId: b, events: [event('B', { n: 1 })], expectedVersion: 'no-stream' });
    await fx.store.append({ streamId: a, events: [event('A', { n: 1 }), event('A', { n: 2 })], expectedVersion: 'no-stream' });
    await fx.store.append({ streamId: b, events: [event('B', { n: 2 })], expectedVersion: 1 });
    const read = await fx.store.readStreams([a, b, none]);
    expect([...read.keys()].sort()).toEqual([a, b].sort());
    expect(read.get(a)!.map((e) => [e.type, e.streamVersion, e.data])).toEqual([['A', 1, { n: 1 }], ['A', 2, { n: 2 }]]);
    expect(read.get(b)!.map((e) => [e.type, e.streamVersion, e.data])).toEqual([['B', 1, { n: 1 }], ['B', 2, { n: 2 }]]);
    expect(read.get(b)).toEqual(await fx.store.readStream(b));
    expect(await fx.store.readStreams([])).toEqual(new Map());
  });

  test('re-appending stored event ids is a no-op that returns the stored positions', async () => {
    const stream = `thing-${uuidv7()}`;
    const events = [{ ...event(), eventId: uuidv7() }, { ...event(), eventId: uuidv7() }];
    const first = await fx.store.append({ streamId: stream, events, expectedVersion: 'no-stream' });
    const again = await fx.store.append({ streamId: stream, events, expectedVersion: 'no-stream' });
    expect(again.positions).toEqual(first.positions);
    expect(again.nextExpectedVersion).toBe(2);
    expect(await fx.store.readStream(stream)).toHaveLength(2);
    await expect(
      fx.store.append({ streamId: stream, events: [events[0], { ...event(), eventId: uuidv7() }], expectedVersion: 0 }),
    ).rejects.toBeInstanceOf(IdempotencyConflictError);
  });

  test('a round of new streams is one plain insert; an existing stream or a stored id falls back to the verdicts', async () => {
    const statements: string[] = [];
    const query = fx.database.query.bind(fx.database);
    fx.database.query = ((sql: string, params?: readonly unknown[], name?: string) => {
      if (name?.startsWith('switchyard_append')) statements.push(name);
      return query(sql, params, name);
    }) as typeof fx.database.query;
    try {
      const upper = uuidv7().toUpperCase();
      const streams = [`new-${uuidv7()}`, `new-${uuidv7()}`, `new-${uuidv7()}`];
      const fresh = await fx.store.appendMany(streams.map((streamId, i) => ({
        streamId, events: [{ ...event('First', { i }), ...(i === 1 ? { eventId: upper } : {}) }, event('Second', { i })], expectedVersion: i === 2 ? 0 : 'no-stream',
      })));
      expect(statements).toEqual(['switchyard_append_new_streams_v2']);
      const positions = fresh.flatMap((result) => (result as { positions: number[] }).positions);
      expect(fresh.map((result) => (result as { nextExpectedVersion: number }).nextExpectedVersion)).toEqual([2, 2, 2]);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions); // request order, then event order
      expect(new Set(positions).size).toBe(6);
      for (const [i, stream] of streams.entries()) {
        const read = await fx.store.readStream(stream);
        expect(read.map((e) => [e.type, e.streamVersion, e.data])).toEqual([['First', 1, { i }], ['Second', 2, { i }]]);
      }
      expect((await fx.store.readStream(streams[1]))[0].eventId).toBe(upper.toLowerCase());

      // One request of the round hits an existing stream, another repeats stored ids: the whole round
      // goes through the verdicts, and each request gets its own answer.
      statements.length = 0;
      const retried = (await fx.store.readStream(streams[0])).map((e) => ({ type: e.type, data: e.data, metadata: { actor: 'test' }, eventId: e.eventId }));
      const another = `new-${uuidv7()}`;
      const [created, taken, again] = await fx.store.appendMany([
        { streamId: another, events: [event()], expectedVersion: 'no-stream' },
        { streamId: streams[2], events: [event()], expectedVersion: 'no-stream' },
        { streamId: streams[0], events: retried, expectedVersion: 'no-stream' },
      ]);
      expect(statements).toEqual(['switchyard_append_new_streams_v2', 'switchyard_append_v4']);
      expect(created).toMatchObject({ nextExpectedVersion: 1 });
      expect(taken).toBeInstanceOf(WrongExpectedVersionError);
      expect(again).toEqual(fresh[0]);
      expect(await fx.store.readStream(streams[2])).toHaveLength(2);
      expect(await fx.store.readStream(another)).toHaveLength(1);

      // Other expected versions, and a request without events, never take the plain insert.
      statements.length = 0;
      await fx.store.appendMany([
        { streamId: `new-${uuidv7()}`, events: [event()], expectedVersion: 'no-stream' },
        { streamId: `new-${uuidv7()}`, events: [], expectedVersion: 'no-stream' },
      ]);
      await fx.store.append({ streamId: another, events: [event()], expectedVersion: 1 });
      expect(statements).toEqual(['switchyard_append_v4', 'switchyard_append_v4']);
    } finally {
      fx.database.query = query;
    }
  });

  test('the events table is append-only', async () => {
    const stream = `thing-${uuidv7()}`;
    await fx.store.append({ streamId: stream, events: [event()], expectedVersion: 'no-stream' });
    await expect(fx.database.query(`UPDATE events SET data = '{}' WHERE stream_id = $1`, [stream])).rejects.toThrow(/append-only/);
    await expect(fx.database.query(`DELETE FROM events WHERE stream_id = $1`, [stream])).rejects.toThrow(/append-only/);
    await expect(fx.database.query(`TRUNCATE events`)).rejects.toThrow(/append-only/);
    expect(await fx.store.readStream(stream)).toHaveLength(1);
  });

  test('readAll returns the global order, filters by type and resumes from its position', async () => {
    const stream = `order-${uuidv7()}`;
    const { positions } = await fx.store.append({
      streamId: stream,
      events: [event('Alpha'), event('Beta'), event('Alpha')],
      expectedVersion: 'no-stream',
    });
    const all = await readEverything(fx, START);
    const mine = all.filter((e) => e.streamId === stream);
    expect(mine.map((e) => e.globalPosition)).toEqual(positions);
    const alphas = await fx.store.readAll(START, { limit: 1000, types: ['Alpha'] });
    expect(alphas.events.filter((e) => e.streamId === stream).map((e) => e.streamVersion)).toEqual([1, 3]);
    expect(alphas.caughtUp).toBe(true);
    const after = await fx.store.readAll(alphas.next, { limit: 1000 });
    expect(after.events).toHaveLength(0);
  });

  test('group commit batches 500 concurrent appends; a conflicting one fails alone', async () => {
    const committer = new GroupCommitter(fx.store, { maxBatchEvents: 200, maxBatchBytes: 1 << 20, maxDelayMs: 2, maxInFlight: 4 });
    const streams = Array.from({ length: 500 }, () => `request-${uuidv7()}`);
    const appends = streams.map((stream) => committer.append({ streamId: stream, events: [event('Admitted')], expectedVersion: 'no-stream' }));
    const conflicting = committer.append({ streamId: streams[7], events: [event('Admitted')], expectedVersion: 'no-stream' });
    const results = await Promise.allSettled([...appends, conflicting]);
    expect(results.slice(0, 500).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(results[500]).toMatchObject({ status: 'rejected', reason: expect.any(WrongExpectedVersionError) });
    const rows = await fx.database.query<{ events: string; transactions: string }>(
      `SELECT count(*)::text AS events, count(DISTINCT transaction_id)::text AS transactions FROM events WHERE stream_id = ANY($1::text[])`,
      [streams],
    );
    expect(Number(rows[0].events)).toBe(500);
    expect(Number(rows[0].transactions)).toBeLessThan(100);
    await committer.drain();
  });

  test('commit notifications are coalesced to one per interval, and every committed type is still announced after its commit', async () => {
    const heard: string[] = [];
    const unlisten = await fx.database.listen(EVENTS_CHANNEL, (payload) => heard.push(payload));
    try {
      const committer = new GroupCommitter(fx.store, { maxBatchEvents: 4, maxBatchBytes: 1 << 20, maxDelayMs: 0, maxInFlight: 1, notifyIntervalMs: 200 });
      // 12 batches of one request each, in quick succession: one is announced in its own statement, the
      // rest together when the interval ends.
      for (let i = 0; i < 12; i++) {
        await committer.append({ streamId: `coalesced-${uuidv7()}`, events: [event(i < 6 ? 'CoalescedA' : 'CoalescedB')], expectedVersion: 'no-stream' });
      }
      const started = Date.now();
      for (; Date.now() - started < 3_000 && !heard.some((p) => p.includes('CoalescedB')); ) await new Promise((resolve) => setTimeout(resolve, 20));
      const mine = heard.filter((p) => p.includes('Coalesced'));
      expect(mine.length).toBeGreaterThanOrEqual(1);
      expect(mine.length).toBeLessThanOrEqual(3); // not twelve
      expect(mine.join(',')).toContain('CoalescedA');
      expect(mine.join(',')).toContain('CoalescedB');
      await committer.drain();
    } finally {
      await unlisten();
    }
  });

  test('the first commit after an interval announces what the interval left unannounced: no statement of its own', async () => {
    const heard: string[] = [];
    const unlisten = await fx.database.listen(EVENTS_CHANNEL, (payload) => heard.push(payload));
    try {
      const interval = 300;
      const committer = new GroupCommitter(fx.store, { maxBatchEvents: 4, maxBatchBytes: 1 << 20, maxDelayMs: 0, maxInFlight: 1, notifyIntervalMs: interval });
      const append = (type: string) => committer.append({ streamId: `carried-${uuidv7()}`, events: [event(type)], expectedVersion: 'no-stream' });
      await append('CarriedFirst'); // announces itself and opens the interval
      const opened = Date.now();
      await append('CarriedLeft'); // within the interval: left unannounced
      // After the interval, and well before the statement of its own would be due (two intervals).
      await new Promise((resolve) => setTimeout(resolve, interval - (Date.now() - opened) + 60));
      await append('CarriedNext');
      const started = Date.now();
      for (; Date.now() - started < 3_000 && !heard.some((p) => p.includes('CarriedNext')); ) await new Promise((resolve) => setTimeout(resolve, 10));
      // Past the time the left commit's own statement would have gone out.
      await new Promise((resolve) => setTimeout(resolve, 2 * interval));
      const mentioning = heard.filter((p) => p.includes('CarriedLeft'));
      expect(mentioning).toHaveLength(1);
      expect(mentioning[0].split(',').sort()).toEqual(['CarriedLeft', 'CarriedNext']);
      expect(heard.filter((p) => p.includes('Carried'))).toHaveLength(2);
      await committer.drain();
    } finally {
      await unlisten();
    }
  });

  test('types carried by an append that appended nothing are still announced, by a statement of their own', async () => {
    const heard: string[] = [];
    const unlisten = await fx.database.listen(EVENTS_CHANNEL, (payload) => heard.push(payload));
    try {
      const interval = 300;
      const committer = new GroupCommitter(fx.store, { maxBatchEvents: 4, maxBatchBytes: 1 << 20, maxDelayMs: 0, maxInFlight: 1, notifyIntervalMs: interval });
      const taken = `refused-${uuidv7()}`;
      await committer.append({ streamId: taken, events: [event('RefusedFirst')], expectedVersion: 'no-stream' }); // opens the interval
      const opened = Date.now();
      await committer.append({ streamId: `refused-${uuidv7()}`, events: [event('RefusedLeft')], expectedVersion: 'no-stream' }); // left unannounced
      await new Promise((resolve) => setTimeout(resolve, interval - (Date.now() - opened) + 60));
      // The next append carries RefusedLeft, but is refused: its statement inserts nothing and notifies nobody.
      await expect(committer.append({ streamId: taken, events: [event('RefusedAgain')], expectedVersion: 'no-stream' })).rejects.toBeInstanceOf(WrongExpectedVersionError);
      const started = Date.now();
      for (; Date.now() - started < 3_000 && !heard.some((p) => p.includes('RefusedLeft')); ) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(heard.filter((p) => p.includes('RefusedLeft'))).toEqual(['RefusedLeft']);
      expect(heard.some((p) => p.includes('RefusedAgain'))).toBe(false);
      await committer.drain();
    } finally {
      await unlisten();
    }
  });

  test('a subscriber reading in batches sees every event exactly once, in order', async () => {
    const stream = `paged-${uuidv7()}`;
    await fx.store.append({ streamId: stream, events: Array.from({ length: 57 }, () => event('Paged')), expectedVersion: 'no-stream' });
    const seen: number[] = [];
    let position = START;
    for (;;) {
      const page = await fx.store.readAll(position, { limit: 10, types: ['Paged'] });
      seen.push(...page.events.filter((e) => e.streamId === stream).map((e) => e.streamVersion));
      position = page.next;
      if (page.caughtUp) break;
    }
    expect(seen).toEqual(Array.from({ length: 57 }, (_, i) => i + 1));
  });

  test('payloads with quotes, backslashes, escapes and non-ASCII text round-trip exactly', async () => {
    const data = { text: `it's "quoted" \\ back\\slash \\' $1 $$ E'x' \n tab\t ünï 中文 🚀`, nested: [{ "k'ey": 'v\\u0041' }], n: 1.5e-7 };
    const stream = `quotes-${uuidv7()}'; DROP TABLE events; --`;
    const committer = new GroupCommitter(fx.store, { maxBatchEvents: 10, maxBatchBytes: 1 << 20, maxDelayMs: 1, maxInFlight: 1 });
    await committer.append({ streamId: stream, events: [{ type: "Quote'd", data, metadata: { actor: "o'brien" } }], expectedVersion: 'no-stream' });
    const [stored] = await fx.store.readStream(stream);
    expect(stored.data).toEqual(data);
    expect(stored.type).toBe("Quote'd");
    expect(stored.metadata).toEqual({ actor: "o'brien" });
  });

  test('a partly stored append is refused whole on every path and inserts nothing', async () => {
    const stream = `thing-${uuidv7()}`;
    const stored = { ...event(), eventId: uuidv7() };
    await fx.store.append({ streamId: stream, events: [stored], expectedVersion: 'no-stream' });
    const fresh = { ...event(), eventId: uuidv7() };
    // `any` skips the version check, so only idempotency can refuse it; a numbered version matches here.
    for (const expectedVersion of ['any', 1, 'stream-exists'] as const) {
      await expect(fx.store.append({ streamId: stream, events: [stored, fresh], expectedVersion })).rejects.toBeInstanceOf(IdempotencyConflictError);
    }
    // The same through the group committer, next to appends that must still commit.
    const committer = new GroupCommitter(fx.store, { maxBatchEvents: 100, maxBatchBytes: 1 << 20, maxDelayMs: 5, maxInFlight: 1 });
    const others = Array.from({ length: 5 }, () => `thing-${uuidv7()}`);
    const results = await Promise.allSettled([
      ...others.map((other) => committer.append({ streamId: other, events: [event()], expectedVersion: 'no-stream' })),
      committer.append({ streamId: stream, events: [fresh, stored], expectedVersion: 'any' }),
    ]);
    expect(results.slice(0, 5).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(results[5]).toMatchObject({ status: 'rejected', reason: expect.any(IdempotencyConflictError) });
    // Still version 1 only: no version 2 without its request's other event, and the new id is nowhere.
    expect((await fx.store.readStream(stream)).map((e) => e.eventId)).toEqual([stored.eventId]);
    const found = await fx.database.query<{ n: string }>(`SELECT count(*)::text AS n FROM events WHERE event_id = $1`, [fresh.eventId]);
    expect(found[0].n).toBe('0');
  });

  test('an idempotent re-append with `any` returns the stored positions and version and leaves no gap', async () => {
    const stream = `thing-${uuidv7()}`;
    const events = [{ ...event(), eventId: uuidv7() }, { ...event(), eventId: uuidv7() }];
    const first = await fx.store.append({ streamId: stream, events, expectedVersion: 'any' });
    await fx.store.append({ streamId: stream, events: [event()], expectedVersion: 'any' });
    const again = await fx.store.append({ streamId: stream, events, expectedVersion: 'any' });
    expect(again).toEqual(first); // the version after the original append, not after the stream's end
    const next = await fx.store.append({ streamId: `thing-${uuidv7()}`, events: [event()], expectedVersion: 'no-stream' });
    const head = await fx.database.query<{ head: string }>(`SELECT max(global_position)::text AS head FROM events WHERE global_position < $1`, [next.positions[0]]);
    // The re-append inserted nothing, so it took no identity value: the next append follows directly.
    expect(next.positions[0]).toBe(Number(head[0].head) + 1);
    expect((await fx.store.readStream(stream)).map((e) => e.streamVersion)).toEqual([1, 2, 3]);
  });

  test('a batch of 50 with one payload the database refuses commits the other 49 in a few transactions', async () => {
    const committer = new GroupCommitter(fx.store, { maxBatchEvents: 500, maxBatchBytes: 1 << 20, maxDelayMs: 20, maxInFlight: 1 });
    const streams = Array.from({ length: 50 }, () => `bisect-${uuidv7()}`);
    const results = await Promise.allSettled(
      streams.map((stream, i) =>
        committer.append({
          streamId: stream,
          // jsonb refuses the NUL character, which JSON.stringify happily writes as \u0000.
          events: [event('Bisected', i === 31 ? { text: 'nul \u0000 here' } : { i })],
          expectedVersion: 'no-stream',
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect(results[31].status).toBe('rejected');
    const rows = await fx.database.query<{ events: string; transactions: string }>(
      `SELECT count(*)::text AS events, count(DISTINCT transaction_id)::text AS transactions FROM events WHERE stream_id = ANY($1::text[])`,
      [streams],
    );
    expect(Number(rows[0].events)).toBe(49);
    expect(Number(rows[0].transactions)).toBeLessThanOrEqual(8); // halving: about log2(50), not 49
  });

  test('two appends to one stream in one batch both commit, in order; a request that cannot be stored fails alone', async () => {
    const committer = new GroupCommitter(fx.store, { maxBatchEvents: 500, maxBatchBytes: 1 << 20, maxDelayMs: 20, maxInFlight: 1 });
    const stream = `twice-${uuidv7()}`;
    const duplicateId = uuidv7();
    const [first, second, repeated, notJson] = await Promise.allSettled([
      committer.append({ streamId: stream, events: [event('A')], expectedVersion: 'no-stream' }),
      committer.append({ streamId: stream, events: [event('B')], expectedVersion: 1 }),
      committer.append({ streamId: `x-${uuidv7()}`, events: [{ ...event(), eventId: duplicateId }, { ...event(), eventId: duplicateId }], expectedVersion: 'any' }),
      committer.append({ streamId: `x-${uuidv7()}`, events: [{ type: 'C', data: () => 1 }], expectedVersion: 'any' }),
    ]);
    expect(first).toMatchObject({ status: 'fulfilled', value: { nextExpectedVersion: 1 } });
    expect(second).toMatchObject({ status: 'fulfilled', value: { nextExpectedVersion: 2 } });
    expect(repeated).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('appears twice') } });
    expect(notJson).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('not JSON') } });
    expect((await fx.store.readStream(stream)).map((e) => e.type)).toEqual(['A', 'B']);
  });

  if (name === 'postgres') {
    test('a reader never skips an event whose transaction commits late (lower position committing last)', async () => {
      const early = new pg.Client({ connectionString: fx.url! });
      const late = new pg.Client({ connectionString: fx.url! });
      await early.connect();
      await late.connect();
      const before = await readEverything(fx, START);
      const position = lastPosition(before);
      const insert = (client: pg.Client, stream: string) =>
        client.query(
          `INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata)
           VALUES ($1, 1, $2, 'Late', 1, '{}', '{}') RETURNING global_position::int AS position`,
          [stream, uuidv7()],
        );
      try {
        await early.query('BEGIN');
        const low = (await insert(early, 'late-a')).rows[0].position as number;
        await late.query('BEGIN');
        const high = (await insert(late, 'late-b')).rows[0].position as number;
        expect(low).toBeLessThan(high);
        await late.query('COMMIT');
        // The higher position is committed, but the lower one is still in flight: nothing may be read yet.
        const during = await fx.store.readAll(position, { limit: 100 });
        expect(during.events.map((e) => e.streamId)).not.toContain('late-b');
        await early.query('COMMIT');
        const after = await fx.store.readAll(during.next, { limit: 100 });
        expect(after.events.map((e) => e.streamId)).toEqual(['late-a', 'late-b']);
      } finally {
        await early.end();
        await late.end();
      }
    });

    test('concurrent writers with random commit delays: a tailing reader sees every event once', async () => {
      const writers = 8;
      const perWriter = 15;
      const expected = new Set<string>();
      const seen: string[] = [];
      let position = lastPosition(await readEverything(fx, START));
      let done = false;
      const tail = (async () => {
        while (!done || seen.length < expected.size) {
          const page = await fx.store.readAll(position, { limit: 50, types: ['Raced'] });
          seen.push(...page.events.map((e) => e.eventId));
          position = page.next;
          if (page.caughtUp) await new Promise((r) => setTimeout(r, 5));
        }
      })();
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          const client = new pg.Client({ connectionString: fx.url! });
          await client.connect();
          for (let i = 0; i < perWriter; i++) {
            const id = uuidv7();
            expected.add(id);
            await client.query('BEGIN');
            await client.query(
              `INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata)
               VALUES ($1, 1, $2, 'Raced', 1, '{}', '{}')`,
              [`raced-${w}-${i}`, id],
            );
            await client.query(`SELECT pg_sleep($1)`, [Math.random() * 0.02]);
            await client.query('COMMIT');
          }
          await client.end();
        }),
      );
      done = true;
      await tail;
      expect(seen).toHaveLength(expected.size);
      expect(new Set(seen)).toEqual(expected);
    });
  }
});

async function readEverything(fx: StoreFixture, from: LogPosition) {
  const out = [];
  let position = from;
  for (;;) {
    const page = await fx.store.readAll(position, { limit: 1000 });
    out.push(...page.events);
    position = page.next;
    if (page.caughtUp) return Object.assign(out, { next: position });
  }
}

function lastPosition(events: Awaited<ReturnType<typeof readEverything>>): LogPosition {
  return events.next;
}
