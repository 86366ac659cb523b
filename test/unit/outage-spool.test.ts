import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError, readEnvironment } from '../../src/config/environment.js';
import { prepareAppend } from '../../src/kernel/event-store/prepared-append.js';
import { OutageSpool, SpoolFullError } from '../../src/kernel/event-store/spool/outage-spool.js';
import { RECORD_HEADER_BYTES, encodeRecord, preparedFromPayload, scanSegment } from '../../src/kernel/event-store/spool/spool-segment.js';
import type { SpoolSettings } from '../../src/kernel/event-store/spool/spool-settings.js';
import { spoolStoreKey } from '../../src/kernel/event-store/spool/spool-settings.js';

function appendOf(n: number, streamId = `request-${n}`) {
  return prepareAppend({
    streamId,
    expectedVersion: 'no-stream',
    events: [
      { type: 'RequestAdmitted', data: { n, text: 'é ✓' } },
      { type: 'RequestCompleted', data: { n } },
    ],
  });
}

describe('spool segment records', () => {
  test('round trip: every payload back, byte for byte, and back into the prepared append it was', () => {
    const appends = [appendOf(1), appendOf(2), appendOf(3)];
    const scan = scanSegment(Buffer.concat(appends.map((a) => encodeRecord(a.json))));
    expect(scan).toEqual({ payloads: appends.map((a) => a.json), tornTailBytes: 0, corruptAt: [] });
    const back = preparedFromPayload(scan.payloads[1]);
    expect(back).toEqual({ ...appends[1], expectedVersion: 'no-stream' });
    const numbered = prepareAppend({ streamId: 's', expectedVersion: 4, events: [{ type: 'T', data: {} }] });
    expect(preparedFromPayload(numbered.json).expectedVersion).toBe(4);
  });

  test('a torn tail (an unfinished last write) is ignored, whatever part of the record made it to disk', () => {
    const first = [appendOf(1).json, appendOf(2).json];
    const intact = Buffer.concat(first.map((json) => encodeRecord(json)));
    const last = encodeRecord(appendOf(3).json);
    for (const cut of [1, RECORD_HEADER_BYTES - 1, RECORD_HEADER_BYTES, RECORD_HEADER_BYTES + 5, last.length - 1]) {
      const scan = scanSegment(Buffer.concat([intact, last.subarray(0, cut)]));
      expect(scan.payloads).toEqual(first);
      expect(scan.tornTailBytes).toBe(cut);
      expect(scan.corruptAt).toEqual([]);
    }
    // Whole length on disk but the bytes are not what was written (zeros from a lost page, say).
    const garbled = Buffer.from(last);
    garbled.fill(0, RECORD_HEADER_BYTES + 2);
    const scan = scanSegment(Buffer.concat([intact, garbled]));
    expect(scan.payloads).toHaveLength(2);
    expect(scan.tornTailBytes).toBe(garbled.length);
    expect(scan.corruptAt).toEqual([]);
  });

  test('damage in the middle (intact records after it) is reported with its offset; the intact records on both sides are read', () => {
    const records = [1, 2, 3, 4].map((n) => encodeRecord(appendOf(n).json));
    const file = Buffer.concat(records);
    const secondAt = records[0].length;
    file[secondAt + RECORD_HEADER_BYTES + 3] ^= 0xff; // one flipped byte in record 2's payload
    const scan = scanSegment(file);
    expect(scan.payloads.map((p) => JSON.parse(p).s)).toEqual(['request-1', 'request-3', 'request-4']);
    expect(scan.corruptAt).toEqual([secondAt]);
    expect(scan.tornTailBytes).toBe(0);
    // A damaged length field: the reader resynchronises on the next record's header.
    const badLength = Buffer.concat(records);
    badLength.writeUInt32LE(0x7fffffff, secondAt + 4);
    expect(scanSegment(badLength).payloads.map((p) => JSON.parse(p).s)).toEqual(['request-1', 'request-3', 'request-4']);
    expect(scanSegment(badLength).corruptAt).toEqual([secondAt]);
  });

  test('the store key names the store, not its password', () => {
    expect(spoolStoreKey('postgres://app:one@db:5432/gw')).toBe(spoolStoreKey('postgres://app:two@db:5432/gw'));
    expect(spoolStoreKey('postgres://app@db:5432/gw')).not.toBe(spoolStoreKey('postgres://app@db:5432/other'));
    expect(spoolStoreKey('postgres://app@db:5432/gw')).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('the outage spool on disk', () => {
  let dir: string;
  const settings = (overrides: Partial<SpoolSettings> = {}): SpoolSettings => ({ directory: dir, maxBytes: 1 << 20, segmentBytes: 1 << 16, ...overrides });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-spool-unit-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('writes are fsynced segments that a new process finds again, in order; the spool is engaged while it holds anything', async () => {
    const spool = OutageSpool.open(settings(), 'store-a');
    expect(spool.engaged).toBe(false);
    expect(spool.spoolBytes()).toBe(0);
    const appends = Array.from({ length: 20 }, (_, n) => appendOf(n));
    await Promise.all(appends.map((a) => spool.write([a]))); // one batch: concurrent writes share an fsync
    expect(spool.engaged).toBe(true);
    const expectedBytes = appends.reduce((sum, a) => sum + encodeRecord(a.json).length, 0);
    expect(spool.spoolBytes()).toBe(expectedBytes);
    await spool.close();

    const reopened = OutageSpool.open(settings(), 'store-a');
    expect(reopened.slot).toBe(spool.slot);
    expect(reopened.engaged).toBe(true);
    expect(reopened.spoolBytes()).toBe(expectedBytes);
    const segments = reopened.sealedSegments();
    expect(segments).toHaveLength(1);
    expect(reopened.read(segments[0]).payloads).toEqual(appends.map((a) => a.json));
    reopened.remove(segments[0]);
    expect(reopened.engaged).toBe(false);
    expect(reopened.spoolBytes()).toBe(0);
    expect(readdirSync(reopened.slot).filter((name) => name.startsWith('segment-'))).toEqual([]);
    await reopened.close();
  });

  test('the bound: an append that would go over it is refused whole, nothing of it written; below it writes go on', async () => {
    const one = encodeRecord(appendOf(1).json).length;
    const spool = OutageSpool.open(settings({ maxBytes: one * 3 }), 'store-b');
    await spool.write([appendOf(1), appendOf(2)]);
    expect(spool.full).toBe(false);
    const refused = await spool.write([appendOf(3), appendOf(4)]).then(() => null, (error: unknown) => error);
    expect(refused).toBeInstanceOf(SpoolFullError);
    expect((refused as Error).message).toMatch(/outage spool is full \(\d+ bytes\)/);
    expect(spool.spoolBytes()).toBe(one * 2);
    // Short of its bound in bytes, yet refusing: what readiness reports (full) follows the refusal.
    expect(spool.full).toBe(true);
    await spool.write([appendOf(5)]);
    expect(spool.full).toBe(true); // at the bound exactly
    await expect(spool.write([appendOf(6)])).rejects.toBeInstanceOf(SpoolFullError);
    await spool.seal();
    const [segment] = spool.sealedSegments();
    expect(spool.read(segment).payloads.map((p) => JSON.parse(p).s)).toEqual(['request-1', 'request-2', 'request-5']);
    // A drained segment makes room: no longer full.
    spool.remove(segment);
    expect(spool.full).toBe(false);
    await spool.close();
  });

  test('segments rotate at their size; seal closes the one being written so a drainer may take it', async () => {
    const spool = OutageSpool.open(settings({ segmentBytes: 1 }), 'store-c');
    for (let n = 0; n < 3; n++) await spool.write([appendOf(n)]);
    expect(spool.sealedSegments()).toHaveLength(2); // the third is still being written
    await spool.seal();
    const segments = spool.sealedSegments();
    expect(segments.map((s) => spool.read(s).payloads.length)).toEqual([1, 1, 1]);
    await spool.write([appendOf(9)]);
    expect(spool.sealedSegments()).toHaveLength(3);
    await spool.close();
  });

  test('two spools of one process take different slots; a dead process’s slot is adopted with its segments', async () => {
    const first = OutageSpool.open(settings(), 'store-d');
    const second = OutageSpool.open(settings(), 'store-d');
    expect(second.slot).not.toBe(first.slot);
    await second.write([appendOf(7)]);
    await second.close();
    // A process that died: its pid file names a process that no longer exists.
    writeFileSync(join(second.slot, 'switchyard.pid'), '999999999');
    const third = OutageSpool.open(settings(), 'store-d');
    expect(third.slot).toBe(second.slot); // the lowest free slot; its own segments are found
    expect(third.spoolBytes()).toBe(encodeRecord(appendOf(7).json).length);
    await third.close();
    await first.close();
    // Another store never sees these segments.
    const other = OutageSpool.open(settings(), 'store-e');
    expect(other.engaged).toBe(false);
    await other.close();
  });

  test('an orphaned slot beside the one taken is inherited whole (a node that ran more workers before)', async () => {
    const a = OutageSpool.open(settings(), 'store-f');
    const b = OutageSpool.open(settings(), 'store-f');
    await b.write([appendOf(1)]);
    await b.close();
    await a.close();
    const c = OutageSpool.open(settings(), 'store-f');
    expect(c.slot).toBe(a.slot);
    expect(c.engaged).toBe(true);
    expect(c.sealedSegments().map((s) => s.path.startsWith(b.slot))).toEqual([true]);
    // The adopted slot is held: a fourth spool does not take those segments a second time.
    const d = OutageSpool.open(settings(), 'store-f');
    expect(d.engaged).toBe(false);
    await d.close();
    await c.close();
  });

  test('quarantine keeps a damaged segment for an operator, out of the count; rejected records are kept too', async () => {
    const spool = OutageSpool.open(settings(), 'store-g');
    await spool.write([appendOf(1)]);
    await spool.seal();
    const [segment] = spool.sealedSegments();
    const kept = spool.quarantine(segment);
    expect(kept).toBe(`${segment.path}.corrupt`);
    expect(existsSync(kept)).toBe(true);
    expect(spool.engaged).toBe(false);
    const refusedJson = appendOf(2).json;
    const rejected = spool.keepRejected(refusedJson);
    expect(scanSegment(readFileSync(rejected)).payloads).toEqual([refusedJson]);
    await spool.close();
    const reopened = OutageSpool.open(settings(), 'store-g');
    expect(reopened.engaged).toBe(false); // neither .corrupt nor rejected.log is drained again
    await reopened.close();
  });

  test('once the store answers again, only streams that still have records here keep coming here; an outage again takes everything', async () => {
    const spool = OutageSpool.open(settings(), 'store-i');
    expect(spool.takes('request-a')).toBe(false);
    await spool.write([appendOf(1, 'request-a')]);
    expect([spool.takes('request-a'), spool.takes('request-b'), spool.bypassing]).toEqual([true, true, false]);
    spool.resumeDirect();
    expect([spool.takes('request-a'), spool.takes('request-b'), spool.bypassing]).toEqual([true, false, true]);
    spool.engage();
    expect(spool.takes('request-b')).toBe(true);
    spool.resumeDirect();
    await spool.seal();
    for (const segment of spool.sealedSegments()) spool.remove(segment);
    // Empty: nothing comes here, and the next outage starts without the old streams.
    expect([spool.engaged, spool.takes('request-a'), spool.bypassing]).toEqual([false, false, false]);
    await spool.write([appendOf(2, 'request-c')]);
    expect([spool.takes('request-a'), spool.takes('request-c')]).toEqual([true, true]);
    spool.resumeDirect();
    expect([spool.takes('request-a'), spool.takes('request-c')]).toEqual([false, true]);
    await spool.close();
  });

  test('a torn tail left in a segment by a crash does not hide the records before it', async () => {
    const spool = OutageSpool.open(settings(), 'store-h');
    await spool.write([appendOf(1), appendOf(2)]);
    await spool.close();
    const [segment] = readdirSync(spool.slot).filter((name) => name.startsWith('segment-'));
    appendFileSync(join(spool.slot, segment), encodeRecord(appendOf(3).json).subarray(0, 20));
    const reopened = OutageSpool.open(settings(), 'store-h');
    const scan = reopened.read(reopened.sealedSegments()[0]);
    expect(scan.payloads.map((p) => JSON.parse(p).s)).toEqual(['request-1', 'request-2']);
    expect(scan.tornTailBytes).toBe(20);
    await reopened.close();
  });
});

describe('spool settings from the environment', () => {
  test('SWITCHYARD_SPOOL_DIR and SWITCHYARD_SPOOL_MAX_BYTES; defaults under the data directory; bad values stop the start', () => {
    expect(readEnvironment({ SWITCHYARD_DATA_DIR: '/var/lib/sy' }).spool).toMatchObject({ directory: '/var/lib/sy/spool', maxBytes: 256 * 1024 * 1024 });
    expect(readEnvironment({ SWITCHYARD_SPOOL_DIR: '/srv/spool', SWITCHYARD_SPOOL_MAX_BYTES: '0' }).spool).toMatchObject({ directory: '/srv/spool', maxBytes: 0 });
    expect(() => readEnvironment({ SWITCHYARD_SPOOL_MAX_BYTES: '1GB' })).toThrow(new ConfigurationError('SWITCHYARD_SPOOL_MAX_BYTES must be a non-negative integer'));
    expect(() => readEnvironment({ SWITCHYARD_SPOOL_MAX_BYTES: '-1' })).toThrow(ConfigurationError);
  });
});
