import { spendCsv } from '../../modules/analytics/spend-csv.js';
import { type SpendRow, sortRows } from '../../modules/analytics/spend-query.js';

const row = (period: string, group: SpendRow['group'], costUsd = '0.000100000000'): SpendRow => ({
  period, group, requests: 1, attempts: 2, inputTokens: 3, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 4, reasoningTokens: 0, costUsd,
  cacheHits: 5, savedUsd: '0.250000000000',
});

describe('spend CSV', () => {
  test('header, one line per row, CRLF; values a spreadsheet would run as formulas are defused, commas and quotes quoted', () => {
    const csv = spendCsv([row('2025-03-01', { tenant: 'acme', model: '=HYPERLINK("x")' }), row('2025-03-01', { tenant: 'a,b', model: 'say "hi"' })], ['tenant', 'model']);
    expect(csv.split('\r\n')).toEqual([
      'period,tenant,model,requests,attempts,input_tokens,cached_input_tokens,cache_write_tokens,output_tokens,reasoning_tokens,cost_usd,cache_hits,saved_usd',
      `2025-03-01,acme,"'=HYPERLINK(""x"")",1,2,3,0,0,4,0,0.000100000000,5,0.250000000000`,
      '2025-03-01,"a,b","say ""hi""",1,2,3,0,0,4,0,0.000100000000,5,0.250000000000',
      '',
    ]);
  });

  test('rows sort by period, then group values by code unit (the same order whatever the source)', () => {
    const rows = sortRows([row('2025-03-02', { model: 'a' }), row('2025-03-01', { model: 'b' }), row('2025-03-01', { model: 'B' }), row('2025-03-01', { model: 'a' })], ['model']);
    expect(rows.map((r) => `${r.period} ${r.group.model}`)).toEqual(['2025-03-01 B', '2025-03-01 a', '2025-03-01 b', '2025-03-02 a']);
  });
});
