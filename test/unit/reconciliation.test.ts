import { Decimal } from 'decimal.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAnthropicExport } from '../../modules/analytics/reconciliation/anthropic-usage-export.js';
import { parseOpenAiExport } from '../../modules/analytics/reconciliation/openai-usage-export.js';
import { UsageExportError, mergeUsage } from '../../modules/analytics/reconciliation/provider-usage.js';
import { baseModel, reconcile } from '../../modules/analytics/reconciliation/reconcile.js';

const fixture = (name: string) => JSON.parse(readFileSync(fileURLToPath(new URL(`../../../test/fixtures/reconciliation/${name}`, import.meta.url)), 'utf8'));

describe('provider usage exports', () => {
  test('OpenAI completions usage: one record per day and model, input including cached tokens', () => {
    const records = parseOpenAiExport(fixture('openai-usage-completions.json'), 'usage.json');
    expect(records.map((r) => [r.day, r.model, r.tokens])).toEqual([
      ['2025-03-01', 'gpt-4o-mini-2024-07-18', { input: 1500, cachedInput: 200, cacheWrite: null, output: 400 }],
      ['2025-03-01', 'gpt-4o-2024-08-06', { input: 2000, cachedInput: 0, cacheWrite: null, output: 500 }],
      ['2025-03-02', 'gpt-4o-mini-2024-07-18', { input: 4000, cachedInput: 1000, cacheWrite: null, output: 1000 }],
      ['2025-03-03', 'gpt-4o-2024-08-06', { input: 1000, cachedInput: 500, cacheWrite: null, output: 200 }],
    ]);
    expect(records.every((r) => r.costUsd === null)).toBe(true);
  });

  test('OpenAI costs by line item: the model is what precedes ", input" / ", output"; amounts stay exact decimals', () => {
    const merged = mergeUsage(parseOpenAiExport(fixture('openai-costs.json'), 'costs.json'));
    const day1 = merged.find((r) => r.day === '2025-03-01' && r.model === 'gpt-4o-mini-2024-07-18');
    expect(day1?.costUsd?.toFixed()).toBe('0.00045');
    expect(day1?.tokens).toBeNull();
    // An array of pages (a paginating script's output) and the spec's singular "result" are read too.
    const page = fixture('openai-costs.json');
    const second = { ...page, data: page.data.map((b: any) => ({ ...b, result: b.results, results: undefined })) };
    expect(parseOpenAiExport([page, second], 'pages.json')).toHaveLength(22);
  });

  test('OpenAI: exports that cannot be reconciled per day and model are refused with the fix', () => {
    const usage = fixture('openai-usage-completions.json');
    usage.data[0].results[0].model = null;
    expect(() => parseOpenAiExport(usage, 'u.json')).toThrow(/group_by=model/);
    const wide = fixture('openai-usage-completions.json');
    wide.data[0].end_time = wide.data[0].start_time + 7 * 86_400;
    expect(() => parseOpenAiExport(wide, 'u.json')).toThrow(/bucket_width=1d/);
    const euros = fixture('openai-costs.json');
    euros.data[0].results[0].amount.currency = 'eur';
    expect(() => parseOpenAiExport(euros, 'c.json')).toThrow(/only USD/);
    const costs = fixture('openai-costs.json');
    costs.data[0].results[0].line_item = null;
    expect(() => parseOpenAiExport(costs, 'c.json')).toThrow(/group_by=line_item/);
    expect(() => parseOpenAiExport({ data: [] }, 'x.json')).toThrow(UsageExportError);
    const negative = fixture('openai-usage-completions.json');
    negative.data[0].results[0].output_tokens = -1;
    expect(() => parseOpenAiExport(negative, 'u.json')).toThrow(/token count/);
  });

  test('Anthropic usage report: input = uncached + cache reads + cache writes; cost report amounts are cents', () => {
    const usage = parseAnthropicExport(fixture('anthropic-usage-report.json'), 'u.json');
    expect(usage[0]).toMatchObject({ day: '2025-03-01', model: 'claude-3-5-haiku-20241022', tokens: { input: 3000, cachedInput: 1000, cacheWrite: 500, output: 600 } });
    const costs = mergeUsage(parseAnthropicExport(fixture('anthropic-cost-report.json'), 'c.json'));
    expect(costs.map((r) => [r.day, r.costUsd?.toFixed()])).toEqual([['2025-03-01', '0.00418'], ['2025-03-02', '0.0012']]);
    // The flat field names some clients write are accepted as well.
    const flat = fixture('anthropic-usage-report.json');
    const { cache_creation: creation, ...rest } = flat.data[0].results[0];
    flat.data[0].results[0] = { ...rest, cache_creation_5m_input_tokens: creation.ephemeral_5m_input_tokens, cache_creation_1h_input_tokens: 7 };
    expect(parseAnthropicExport(flat, 'u.json')[0].tokens).toEqual({ input: 3007, cachedInput: 1000, cacheWrite: 507, output: 600 });
    const numeric = fixture('anthropic-cost-report.json');
    numeric.data[0].results[0].amount = 12;
    expect(() => parseAnthropicExport(numeric, 'c.json')).toThrow(/decimal string/);
  });
});

describe('reconciliation', () => {
  test('a snapshot date is not part of the model key', () => {
    expect(baseModel('gpt-4o-mini-2024-07-18')).toBe('gpt-4o-mini');
    expect(baseModel('claude-3-5-haiku-20241022')).toBe('claude-3-5-haiku');
    expect(baseModel('gpt-4o')).toBe('gpt-4o');
    expect(baseModel('o1-2024-12')).toBe('o1-2024-12');
  });

  test('a day the provider billed and the ledger did not (and the reverse) is a discrepancy on each field the export states', () => {
    const ledger = [{ day: '2025-03-01', model: 'm', attempts: 1, inputTokens: 10, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 5, costUsd: new Decimal('0.5') }];
    const provider = [{ day: '2025-03-02', model: 'm', tokens: null, costUsd: new Decimal('0.25') }];
    const report = reconcile(ledger, provider, new Decimal('0.01'));
    expect(report.discrepancies).toEqual([
      { day: '2025-03-01', model: 'm', field: 'costUsd', ledger: '0.5', provider: '0', difference: '-0.5' },
      { day: '2025-03-02', model: 'm', field: 'costUsd', ledger: '0', provider: '0.25', difference: '0.25' },
    ]);
  });
});
