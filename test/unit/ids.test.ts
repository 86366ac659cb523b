import { isUuid, uuidv7 } from '../../src/kernel/ids.js';

describe('UUIDv7 from pooled randomness', () => {
  test('RFC 9562 layout: the milliseconds in the first 48 bits, version 7, variant 10', () => {
    const id = uuidv7(0x0123456789ab);
    expect(isUuid(id)).toBe(true);
    expect(id.startsWith('01234567-89ab-7')).toBe(true);
    expect('89ab').toContain(id[19]);
  });

  test('ids are unique across pool refills and sort by their milliseconds', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => uuidv7(1_700_000_000_000 + Math.floor(i / 100)));
    expect(new Set(ids).size).toBe(ids.length);
    const prefixes = ids.map((id) => id.slice(0, 13));
    expect([...prefixes].sort()).toEqual(prefixes);
  });

  test('the random part is not reused: no two ids of a large sample share their 74 random bits', () => {
    const random = new Set(Array.from({ length: 10_000 }, () => uuidv7(0).slice(15).replace(/-/g, '')));
    expect(random.size).toBe(10_000);
  });
});
