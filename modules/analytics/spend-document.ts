import type { Granularity, SpendDimension, SpendGroup, SpendMetrics, SpendRow } from './spend-query.js';
import type { SpendRangeBasis, ResolvedSpendQuery } from './spend-range.js';
import type { SpendReport } from './spend-reports.js';

/** A row as the JSON answer carries it: the period, one member per grouped dimension, the metrics. */
export type SpendDocumentRow = SpendMetrics & SpendGroup & { period: string };

/** The analytics API's JSON answer; `switchyard spend --format json` prints the same document. */
export interface SpendDocument {
  source: SpendReport['source'];
  fallback?: string;
  from: string;
  to: string;
  range: SpendRangeBasis;
  granularity: Granularity;
  groupBy: SpendDimension[];
  filters: Partial<Record<SpendDimension, string>>;
  rows: SpendDocumentRow[];
  totals: SpendMetrics;
}

export function spendDocument(query: ResolvedSpendQuery, report: SpendReport): SpendDocument {
  return {
    source: report.source,
    ...(report.fallback ? { fallback: report.fallback } : {}),
    from: query.from.toISOString(),
    to: query.to.toISOString(),
    range: query.range,
    granularity: query.granularity,
    groupBy: [...query.groupBy],
    filters: query.filters,
    rows: report.rows.map(({ group, ...metrics }) => ({ ...group, ...metrics })),
    totals: report.totals,
  };
}

/** The rows of a document with their group apart again (for CSV and tables). */
export function documentRows(document: SpendDocument): SpendRow[] {
  return document.rows.map((row) => {
    const group: SpendGroup = Object.fromEntries(document.groupBy.map((dimension) => [dimension, row[dimension] ?? '']));
    const metrics = Object.fromEntries(Object.entries(row).filter(([name]) => !(document.groupBy as string[]).includes(name) && name !== 'period')) as unknown as SpendMetrics;
    return { period: row.period, group, ...metrics };
  });
}
