import { type CommittedEvent, CommittedTail } from '../../src/kernel/event-store/committed-tail.js';
import { type LogPosition, START } from '../../src/kernel/event-store/log-position.js';

const identity = (_type: string, schemaVersion: number, data: unknown) => ({ schemaVersion, data });

/** An append's document as prepareAppend writes it, with one event per entry of `data`. */
function documentOf(stream: string, data: unknown[]): string {
  return JSON.stringify({ s: stream, x: 0, e: data.map((d, i) => ({ i: `id-${stream}-${i}`, t: 'Thing', v: 1, d, m: { actor: 'test' } })) });
}

function committed(transactionId: bigint, positions: number[], type = 'Thing'): CommittedEvent[] {
  const stream = `s-${transactionId}`;
  const document = Buffer.from(documentOf(stream, positions.map((p) => ({ p }))));
  return positions.map((globalPosition, index) => ({
    globalPosition, transactionId, streamId: stream, streamVersion: index + 1, eventId: `id-${stream}-${index}`, type,
    document, index, recordedAt: '2026-12-04T10:00:00.123456Z',
  }));
}

const at = (transactionId: bigint, globalPosition = 0): LogPosition => ({ transactionId, globalPosition });
const positions = (tail: CommittedTail, from: LogPosition, limit = 100, types?: string[]) =>
  tail.read(from, { limit, types })?.events.map((event) => event.globalPosition) ?? null;

function anchored(horizon: bigint): CommittedTail {
  const tail = new CommittedTail(100, identity);
  tail.settle(tail.issue(), { kind: 'read', horizon: at(horizon) });
  return tail;
}

describe('the committed tail (the embedded log\'s newest events in memory)', () => {
  test('answers nothing until a read of the log gave it a horizon, and nothing from before it', () => {
    const tail = new CommittedTail(100, identity);
    tail.settle(tail.issue(), { kind: 'committed', events: committed(5n, [1, 2]) });
    expect(tail.read(START, { limit: 10 })).toBeNull();
    tail.settle(tail.issue(), { kind: 'read', horizon: at(6n) });
    tail.settle(tail.issue(), { kind: 'committed', events: committed(7n, [3, 4]) });
    expect(positions(tail, at(6n))).toEqual([3, 4]);
    expect(tail.read(at(5n, 2), { limit: 10 })).toBeNull(); // before the horizon: the log answers
  });

  test('a statement settling early waits for every statement issued before it', () => {
    const tail = anchored(10n);
    const first = tail.issue();
    const second = tail.issue();
    tail.settle(second, { kind: 'committed', events: committed(12n, [7, 8]) });
    // The first may have committed (transaction 11) and not been seen yet: the second's events must wait.
    expect(positions(tail, at(10n))).toEqual([]);
    expect(tail.read(at(10n), { limit: 10 })!.next).toEqual(at(10n));
    tail.settle(first, { kind: 'committed', events: committed(11n, [5, 6]) });
    expect(positions(tail, at(10n))).toEqual([5, 6, 7, 8]);
  });

  test('next: the last event when the page is full, the first transaction after the newest event when caught up', () => {
    const tail = anchored(10n);
    tail.settle(tail.issue(), { kind: 'committed', events: committed(11n, [1, 2, 3]) });
    const full = tail.read(at(10n), { limit: 2 })!;
    expect(full.events.map((e) => e.globalPosition)).toEqual([1, 2]);
    expect(full).toMatchObject({ caughtUp: false, next: at(11n, 2) });
    const rest = tail.read(full.next, { limit: 2 })!;
    expect(rest.events.map((e) => e.globalPosition)).toEqual([3]);
    expect(rest).toMatchObject({ caughtUp: true, next: at(12n) });
    expect(tail.read(at(40n), { limit: 2 })).toMatchObject({ events: [], caughtUp: true, next: at(40n) });
  });

  test('types and streams filter as the log does, the position still moving past the others', () => {
    const tail = anchored(1n);
    tail.settle(tail.issue(), { kind: 'committed', events: committed(2n, [1, 2], 'RequestAdmitted') });
    tail.settle(tail.issue(), { kind: 'committed', events: committed(3n, [3], 'AliasPublished') });
    const page = tail.read(at(1n), { limit: 10, types: ['AliasPublished'] })!;
    expect(page.events.map((e) => e.globalPosition)).toEqual([3]);
    expect(page.next).toEqual(at(4n));
    expect(tail.read(at(1n), { limit: 10, types: ['Other'] })).toMatchObject({ events: [], next: at(4n) });
    expect(tail.read(at(1n), { limit: 10, streamId: 's-2' })!.events.map((e) => e.globalPosition)).toEqual([1, 2]);
  });

  test('an effect it cannot describe makes it forget until the next read of the log', () => {
    const tail = anchored(1n);
    tail.settle(tail.issue(), { kind: 'committed', events: committed(2n, [1]) });
    tail.settle(tail.issue(), { kind: 'unknown' });
    expect(tail.read(at(2n, 1), { limit: 10 })).toBeNull();
    tail.settle(tail.issue(), { kind: 'committed', events: committed(4n, [5]) }); // not anchored: dropped
    tail.settle(tail.issue(), { kind: 'read', horizon: at(5n) });
    tail.settle(tail.issue(), { kind: 'committed', events: committed(6n, [6]) });
    expect(tail.read(at(2n, 1), { limit: 10 })).toBeNull();
    expect(positions(tail, at(5n))).toEqual([6]);
  });

  test('an event out of log order makes it forget rather than hand out a position a reader could skip past', () => {
    const tail = anchored(1n);
    tail.settle(tail.issue(), { kind: 'committed', events: committed(5n, [9]) });
    tail.settle(tail.issue(), { kind: 'committed', events: committed(4n, [8]) });
    expect(tail.read(at(1n), { limit: 10 })).toBeNull();
  });

  test('holds at most its capacity: a reader from before what it kept reads the log', () => {
    const tail = new CommittedTail(4, identity);
    tail.settle(tail.issue(), { kind: 'read', horizon: at(1n) });
    for (let i = 1; i <= 5; i++) tail.settle(tail.issue(), { kind: 'committed', events: committed(BigInt(i + 1), [i]) });
    expect(tail.read(at(1n), { limit: 10 })).toBeNull();
    expect(positions(tail, at(4n, 3))).toEqual([4, 5]);
  });

  test('gives every read objects of its own, as stored: payloads, metadata, stored form', () => {
    const tail = anchored(1n);
    tail.settle(tail.issue(), { kind: 'committed', events: committed(2n, [1]) });
    const a = tail.read(at(1n), { limit: 1 })!.events[0];
    const b = tail.read(at(1n), { limit: 1 })!.events[0];
    expect(a.data).toEqual({ p: 1 });
    expect(a.data).not.toBe(b.data);
    (a.data as { p: number }).p = 99;
    expect(b.data).toEqual({ p: 1 });
    expect(a).toMatchObject({ metadata: { actor: 'test' }, schemaVersion: 1, streamVersion: 1, eventId: 'id-s-2-0' });
    expect(a.stored).toEqual({ schemaVersion: 1, data: { p: 99 }, recordedAt: '2026-12-04T10:00:00.123456Z' });
    expect(a.recordedAt.toISOString()).toBe('2026-12-04T10:00:00.123Z');
  });

  test('settled() resolves once every statement issued before it is applied, and is null when none is out', async () => {
    const tail = anchored(1n);
    expect(tail.settled()).toBeNull();
    const first = tail.issue();
    const second = tail.issue();
    const order: string[] = [];
    const waiting = tail.settled()!.then(() => order.push(`settled with ${positions(tail, at(1n))!.join(',')}`));
    const again = tail.settled()!.then(() => order.push('second waiter'));
    tail.settle(second, { kind: 'committed', events: committed(3n, [2]) });
    await Promise.resolve();
    expect(order).toEqual([]);
    tail.settle(first, { kind: 'committed', events: committed(2n, [1]) });
    await Promise.all([waiting, again]);
    expect(order).toEqual(['settled with 1,2', 'second waiter']);
    const later = tail.issue();
    const third = tail.settled()!;
    tail.settle(later, { kind: 'nothing' });
    await expect(third).resolves.toBeUndefined();
  });

  test('a statement settled twice counts once', () => {
    const tail = anchored(1n);
    const statement = tail.issue();
    tail.settle(statement, { kind: 'committed', events: committed(2n, [1]) });
    tail.settle(statement, { kind: 'unknown' });
    expect(positions(tail, at(1n))).toEqual([1]);
  });
});
