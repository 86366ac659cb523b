import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GroupCommitter } from '../../src/kernel/event-store/group-committer.js';
import { prepareAppend } from '../../src/kernel/event-store/prepared-append.js';
import { OutageSpool } from '../../src/kernel/event-store/spool/outage-spool.js';
import { SpoolDrainer } from '../../src/kernel/event-store/spool/spool-drainer.js';
import { RECORD_HEADER_BYTES, encodeRecord, preparedFromPayload, scanSegment } from '../../src/kernel/event-store/spool/spool-segment.js';
import { type StoreFixture, describeOnPostgres } from '../support/event-store-targets.js';

/** Draining spooled appends into PostgreSQL (the only store that can go away): in order, once, and safely again after a crash. */
describeOnPostgres('draining the outage spool (%s)', (target) => {
  let fixture: StoreFixture;
  let dir: string;
  const settings = () => ({ directory: dir, maxBytes: 1 << 24, segmentBytes: 1 << 12 });
  beforeEach(async () => {
    fixture = await target.open();
    dir = mkdtempSync(join(tmpdir(), 'switchyard-spool-drain-'));
  });
  afterEach(async () => {
    await fixture.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const request = (n: number) =>
    prepareAppend({
      streamId: `request-${n}`,
      expectedVersion: 'no-stream',
      events: [
        { type: 'RequestAdmitted', data: { n } },
        { type: 'AttemptFinished', data: { n, attempt: 1 } },
        { type: 'RequestCompleted', data: { n } },
      ],
    });

  async function countEvents(): Promise<number> {
    const rows = await fixture.database.query<{ n: string }>(`SELECT count(*)::text AS n FROM events`);
    return Number(rows[0].n);
  }

  test('every spooled append lands once, in spool order, with the ids it was given; segments are deleted', async () => {
    const spool = OutageSpool.open(settings(), 'drain');
    const appends = Array.from({ length: 60 }, (_, n) => request(n));
    for (const append of appends) await spool.write([append]);
    // A strict request: RequestAdmitted spooled first, the rest as versions 2… later.
    const admitted = prepareAppend({ streamId: 'request-strict', expectedVersion: 'no-stream', events: [{ type: 'RequestAdmitted', data: {} }] });
    const rest = prepareAppend({ streamId: 'request-strict', expectedVersion: 1, events: [{ type: 'RequestCompleted', data: {} }] });
    await spool.write([admitted, rest]);
    expect(spool.sealedSegments().length).toBeGreaterThan(1); // 4 KiB segments: several

    const drainer = new SpoolDrainer(fixture.store, spool, { batchAppends: 7 });
    expect(await drainer.drain()).toBe(true);
    expect(spool.engaged).toBe(false);
    expect(readdirSync(spool.slot).filter((name) => name.startsWith('segment-'))).toEqual([]);
    expect(await countEvents()).toBe(60 * 3 + 2);
    const stored = await fixture.store.readAll({ transactionId: 0n, globalPosition: 0 }, { limit: 1000 });
    const order = stored.events.filter((e) => e.type === 'RequestAdmitted').map((e) => e.streamId);
    expect(order).toEqual([...appends.map((a) => a.streamId), 'request-strict']);
    expect(stored.events.map((e) => e.eventId)).toEqual([...appends.flatMap((a) => a.eventIds), ...admitted.eventIds, ...rest.eventIds]);
    expect((await fixture.store.readStream('request-strict')).map((e) => e.streamVersion)).toEqual([1, 2]);
    await spool.close();
  });

  test('a crash after appending and before deleting the segment: the next process drains it again and nothing is doubled', async () => {
    const spool = OutageSpool.open(settings(), 'crash');
    for (let n = 0; n < 10; n++) await spool.write([request(n)]);
    await spool.seal();
    const [segment] = spool.sealedSegments();
    const copy = `${segment.path}.copy`;
    copyFileSync(segment.path, copy);
    // Some of it was committed directly before the connection was lost (an ambiguous commit): stored already.
    const scan = spool.read(segment);
    await fixture.store.appendPrepared(scan.payloads.slice(0, 3).map(preparedFromPayload));
    expect(await new SpoolDrainer(fixture.store, spool).drain()).toBe(true);
    expect(await countEvents()).toBe(30);
    await spool.close();

    // The process "died" before the deletion was durable: the segment is back on disk.
    copyFileSync(copy, segment.path);
    rmSync(copy);
    const next = OutageSpool.open(settings(), 'crash');
    expect(next.engaged).toBe(true);
    expect(await new SpoolDrainer(fixture.store, next).drain()).toBe(true);
    expect(await countEvents()).toBe(30);
    await next.close();
  });

  test('under steady traffic the drain still ends: after one whole pass new appends commit directly; a strict request continues at version 2', async () => {
    const spool = OutageSpool.open(settings(), 'steady');
    const committer = new GroupCommitter(fixture.store, { maxBatchEvents: 500, maxBatchBytes: 1 << 20, maxDelayMs: 0, maxInFlight: 2, spool });
    // The backlog of an outage, a strict request among it (RequestAdmitted spooled, the rest still to come).
    for (let n = 0; n < 30; n++) await spool.write([request(n)]);
    await spool.write([prepareAppend({ streamId: 'request-strict', expectedVersion: 'no-stream', events: [{ type: 'RequestAdmitted', data: {} }] })]);
    let writing = true;
    let written = 0;
    const traffic = (async () => {
      for (let n = 100; writing; n++) {
        await Promise.all([0, 1, 2, 3].map((k) => committer.append({ streamId: `request-${n}-${k}`, expectedVersion: 'no-stream', events: [{ type: 'RequestAdmitted', data: {} }] })));
        written += 4;
      }
    })();
    const drained = await new SpoolDrainer(fixture.store, spool, { batchAppends: 5 }).drain();
    const writtenWhenDrained = written;
    const rest = await committer.append({ streamId: 'request-strict', expectedVersion: 1, events: [{ type: 'RequestCompleted', data: {} }] });
    writing = false;
    await traffic;
    expect(drained).toBe(true);
    expect(spool.engaged).toBe(false);
    expect(rest.spooled).toBeUndefined(); // the spool was empty by then: committed directly, at version 2
    expect(rest.nextExpectedVersion).toBe(2);
    expect(written).toBeGreaterThan(writtenWhenDrained); // traffic kept flowing while and after the spool ran empty
    expect(await countEvents()).toBe(30 * 3 + 2 + written);
    await committer.drain();
    await spool.close();
  });

  test('a torn tail is ignored; damage mid-file keeps the file for an operator and drains the intact records', async () => {
    const spool = OutageSpool.open(settings(), 'damage');
    const appends = [0, 1, 2, 3].map(request);
    await spool.write(appends);
    await spool.seal();
    await spool.close();
    const slot = spool.slot;
    const [name] = readdirSync(slot).filter((n) => n.startsWith('segment-'));
    const bytes = readFileSync(join(slot, name));
    const second = encodeRecord(appends[0].json).length;
    bytes[second + RECORD_HEADER_BYTES + 10] ^= 0x55; // request-1's record is damaged, request-2 and 3 follow it
    const torn = encodeRecord(request(9).json).subarray(0, 30);
    writeFileSync(join(slot, name), Buffer.concat([bytes, torn]));

    const next = OutageSpool.open(settings(), 'damage');
    expect(await new SpoolDrainer(fixture.store, next).drain()).toBe(true);
    const streams = (await fixture.store.readAll({ transactionId: 0n, globalPosition: 0 }, { limit: 100 })).events.map((e) => e.streamId);
    expect([...new Set(streams)]).toEqual(['request-0', 'request-2', 'request-3']);
    expect(existsSync(join(slot, `${name}.corrupt`))).toBe(true);
    expect(scanSegment(readFileSync(join(slot, `${name}.corrupt`))).corruptAt).toEqual([second]);
    expect(next.engaged).toBe(false);
    await next.close();
  });

  test('a record the store refuses (its stream moved on) is kept in rejected.log and the drain goes on', async () => {
    await fixture.store.append({ streamId: 'request-taken', expectedVersion: 'no-stream', events: [{ type: 'RequestAdmitted', data: {} }] });
    const spool = OutageSpool.open(settings(), 'refused');
    const clash = prepareAppend({ streamId: 'request-taken', expectedVersion: 'no-stream', events: [{ type: 'RequestAdmitted', data: { other: true } }] });
    await spool.write([clash, request(1)]);
    expect(await new SpoolDrainer(fixture.store, spool).drain()).toBe(true);
    expect(await countEvents()).toBe(1 + 3);
    expect(scanSegment(readFileSync(join(spool.slot, 'rejected.log'))).payloads).toEqual([clash.json]);
    await spool.close();
  });
});
