import { METRIC_COLUMNS, type SpendDimension, type SpendRow } from './spend-query.js';

/**
 * CSV for spreadsheets: a header, one line per row. Text fields are quoted when needed, and a value that
 * a spreadsheet would run as a formula (=, +, -, @ first) is prefixed with an apostrophe.
 */
export function spendCsv(rows: readonly SpendRow[], groupBy: readonly SpendDimension[]): string {
  const header = ['period', ...groupBy, ...METRIC_COLUMNS.map(([, column]) => column)];
  const lines = rows.map((row) => [
    row.period,
    ...groupBy.map((dimension) => text(row.group[dimension] ?? '')),
    ...METRIC_COLUMNS.map(([metric]) => String(row[metric])),
  ].join(','));
  return `${[header.join(','), ...lines].join('\r\n')}\r\n`;
}

function text(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n']/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
