import { RequestScoped } from '../../src/kernel/index.js';

describe('RequestScoped', () => {
  it('gives back what was set on an object, and nothing for an object it was never set on', () => {
    const table = new RequestScoped<object, string>('test');
    const a = {};
    const b = {};
    table.set(a, 'first');
    expect(table.get(a)).toBe('first');
    expect(table.get(b)).toBeUndefined();
    table.set(a, 'second');
    expect(table.get(a)).toBe('second');
  });

  it('keeps two tables on the same object apart, even with the same description', () => {
    const one = new RequestScoped<object, number>('same');
    const two = new RequestScoped<object, number>('same');
    const key = {};
    one.set(key, 1);
    two.set(key, 2);
    expect([one.get(key), two.get(key)]).toEqual([1, 2]);
  });

  it('is invisible to spreading, Object.keys, for…in, JSON and Object.assign of the object', () => {
    const table = new RequestScoped<Record<string, unknown>, { secret: string }>('hidden');
    const headers: Record<string, unknown> = { authorization: 'Bearer x', 'content-type': 'application/json' };
    table.set(headers, { secret: 'hash' });
    expect(Object.keys(headers)).toEqual(['authorization', 'content-type']);
    expect(JSON.stringify(headers)).toBe('{"authorization":"Bearer x","content-type":"application/json"}');
    const spread = { ...headers };
    const assigned = Object.assign({}, headers);
    expect(table.get(spread)).toBeUndefined();
    expect(table.get(assigned)).toBeUndefined();
    const seen: string[] = [];
    for (const name in headers) seen.push(name);
    expect(seen).toEqual(['authorization', 'content-type']);
    expect(table.get(headers)).toEqual({ secret: 'hash' });
  });

  it('works on objects without a prototype and on objects with prototype-named keys', () => {
    const table = new RequestScoped<object, string>('bare');
    const bare = Object.create(null) as Record<string, unknown>;
    const hostile = JSON.parse('{"__proto__":{"polluted":true},"constructor":1,"hasOwnProperty":2}') as object;
    table.set(bare, 'bare');
    table.set(hostile, 'hostile');
    table.set(hostile, 'hostile again');
    expect(table.get(bare)).toBe('bare');
    expect(table.get(hostile)).toBe('hostile again');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
