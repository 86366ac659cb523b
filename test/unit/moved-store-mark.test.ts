import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MOVED_MARK_FILE, readMovedMark, refuseMovedStore, writeMovedMark } from '../../src/migrate/moved-store-mark.js';
import { endpointLabel } from '../../src/migrate/store-endpoint.js';

/**
 * The mark `switchyard migrate` leaves in an embedded store it moved to PostgreSQL (the live test is
 * integration/store-migration): what it says, what it keeps of the target, and that nothing makes it open again
 * but its deletion.
 */
describe('a moved embedded store', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-moved-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('the target as printed keeps no password, whether in the user part or the query', () => {
    const label = endpointLabel({ kind: 'postgres', url: 'postgres://sw:pw-in-user@db.internal:5432/gw?password=pw-in-query&sslpassword=pw-ssl&sslmode=require' });
    expect(label).toBe('PostgreSQL postgres://sw@db.internal:5432/gw');
    expect(endpointLabel({ kind: 'pglite', dataDir: dir })).toBe(`the embedded store in ${dir}`);
  });

  test('unmarked: opens; marked: refused, naming the target, the way back, and nothing secret; the file is its owner\'s alone', () => {
    expect(() => refuseMovedStore(dir)).not.toThrow();
    writeMovedMark(dir, { to: endpointLabel({ kind: 'postgres', url: 'postgres://sw:pw@db:5432/gw' }), movedAt: '2026-12-07T08:00:00.000Z', lastPosition: '812:40' });
    expect(statSync(join(dir, MOVED_MARK_FILE)).mode & 0o777).toBe(0o600);
    expect(readMovedMark(dir)).toEqual({ to: 'PostgreSQL postgres://sw@db:5432/gw', movedAt: '2026-12-07T08:00:00.000Z', lastPosition: '812:40' });
    expect(() => refuseMovedStore(dir)).toThrow(
      `The embedded store in ${dir} was moved to PostgreSQL postgres://sw@db:5432/gw by switchyard migrate (2026-12-07T08:00:00.000Z); the gateway's log is there now. ` +
        `Set DATABASE_URL to that database for this command (nothing was read or written here). ` +
        `To use the embedded store again anyway — it holds nothing written since the move — delete ${join(dir, MOVED_MARK_FILE)}.`,
    );
  });

  test('a mark edited into something else is still a mark', () => {
    writeFileSync(join(dir, MOVED_MARK_FILE), 'not json');
    expect(() => refuseMovedStore(dir)).toThrow(/was moved to another store by switchyard migrate \(an unknown time\)/);
    rmSync(join(dir, MOVED_MARK_FILE));
    expect(() => refuseMovedStore(dir)).not.toThrow();
  });
});
