import { copyStatement, csvRows } from '../../src/kernel/database/copy-rows.js';

describe('bulk-load rows (the embedded COPY)', () => {
  it('quotes every string, doubling its quotes, so separators, line breaks and COPY markers stay data; NULL is the one unquoted empty field', () => {
    expect(csvRows([['a,b', 'say "hi"', 'two\nlines', '\\.', '', null]])).toBe('"a,b","say ""hi""","two\nlines","\\.","",\n');
  });

  it('writes booleans as t/f, finite numbers as JavaScript writes them, and a number that is not finite as NULL (as JSON would)', () => {
    expect(csvRows([[true, false, 0, -12.5, 1e308, Number.NaN, Number.POSITIVE_INFINITY], [1]])).toBe('t,f,0,-12.5,1e+308,,\n1\n');
    expect(csvRows([])).toBe('');
  });

  it('names only plain identifiers in the statement', () => {
    expect(copyStatement('request_summaries', ['request_id', 'at'])).toBe(`COPY request_summaries (request_id, at) FROM '/dev/blob' WITH (FORMAT csv)`);
    expect(() => copyStatement('request_summaries; DROP TABLE events', ['a'])).toThrow(/plain identifier/);
    expect(() => copyStatement('t', ['a', 'b"c'])).toThrow(/plain identifier/);
  });
});
