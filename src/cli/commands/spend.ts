import { parseArgs } from 'node:util';
import { spendCsv } from '../../../modules/analytics/spend-csv.js';
import { documentRows, spendDocument, type SpendDocument } from '../../../modules/analytics/spend-document.js';
import { METRIC_COLUMNS, SPEND_DIMENSION_NAMES, type SpendDimension, type SpendMetrics } from '../../../modules/analytics/spend-query.js';
import { resolveSpendRequest, SpendRequestError } from '../../../modules/analytics/spend-range.js';
import { SpendReports } from '../../../modules/analytics/spend-reports.js';
import { readEnvironment } from '../../config/environment.js';
import { ClickHouseConnection, clickHouseSettings } from '../../../projections/clickhouse-analytics/index.js';
import { openLogReader } from '../../log-reader.js';
import { parserOptions } from '../cli-commands.js';
import { writeOut } from '../output.js';
import { runningServer } from '../running-server.js';

const SPEND_GRANULARITIES = ['day', 'week', 'month'] as const;
const SPEND_FORMATS = ['table', 'csv', 'json'] as const;

export interface SpendOptions {
  groupBy: SpendDimension[];
  granularity: (typeof SPEND_GRANULARITIES)[number];
  from: string | undefined;
  to: string | undefined;
  filters: Partial<Record<SpendDimension, string>>;
  format: (typeof SPEND_FORMATS)[number];
}

/** Flags of the command before issue 34, and what replaced them: named, rather than an "unknown option". */
const REPLACED_FLAGS: Record<string, string> = {
  '--period': '--period was replaced by --granularity day|week|month (default month)',
  '--json': '--json was replaced by --format json (the analytics API\'s document: rows and totals)',
};

/** The options `spend` was given, or what is wrong with them (a usage problem, exit 2). */
export function spendOptions(args: string[]): SpendOptions | string {
  for (const arg of args) {
    const replaced = REPLACED_FLAGS[arg.split('=')[0]];
    if (replaced) return replaced;
  }
  const { values } = parseArgs({ args, options: parserOptions('spend') });
  const groupBy = values['group-by'] === undefined ? [] : values['group-by'].split(',').map((d) => d.trim());
  const unknown = groupBy.filter((d) => !(SPEND_DIMENSION_NAMES as string[]).includes(d));
  if (unknown.length) return `--group-by: unknown ${unknown.map((d) => `'${d}'`).join(', ')} (known: ${SPEND_DIMENSION_NAMES.join(', ')})`;
  if (!(SPEND_GRANULARITIES as readonly string[]).includes(values.granularity)) return '--granularity must be day, week or month';
  if (!(SPEND_FORMATS as readonly string[]).includes(values.format)) return '--format must be table, csv or json';
  for (const [flag, value] of [['--from', values.from], ['--to', values.to]] as const) {
    if (value !== undefined && Number.isNaN(Date.parse(value))) return `${flag} must be an ISO-8601 timestamp`;
  }
  const filters: SpendOptions['filters'] = {};
  if (values.tenant !== undefined) filters.tenant = values.tenant;
  if (values.key !== undefined) filters.key = values.key;
  const options: SpendOptions = {
    groupBy: groupBy as SpendDimension[], granularity: values.granularity as SpendOptions['granularity'],
    from: values.from, to: values.to, filters, format: values.format as SpendOptions['format'],
  };
  // The same checks the analytics API makes (both or neither of from/to, boundaries), before anything is opened.
  try {
    resolveSpendRequest({ ...options, from: isoOf(options.from), to: isoOf(options.to) });
  } catch (error) {
    if (error instanceof SpendRequestError) return `--${error.field}: ${error.message}`;
    throw error;
  }
  return options;
}

/**
 * `spend`: the analytics API's report, printed as a table (with a total row), CSV or JSON. Money is the
 * ledger's decimal text, never a float: the total row is the sources' own sum, not one computed here.
 */
export async function spendCommand(options: SpendOptions): Promise<number> {
  const document = await spendReport(options);
  const range = `${document.from} to ${document.to}${document.range === 'current-month' ? ' (the current month so far)' : ''}, by ${document.granularity}, from ${document.source}` +
    `${document.fallback ? ` (${document.fallback})` : ''}`;
  if (options.format === 'json') {
    await writeOut(`${JSON.stringify(document)}\n`);
  } else if (options.format === 'csv') {
    // The CSV stays pure data (a spreadsheet reads it as is): what it covers goes to stderr.
    process.stderr.write(`spend ${range}\n`);
    await writeOut(spendCsv(documentRows(document), document.groupBy));
  } else {
    await writeOut(`spend ${range}${filterText(document.filters)}\n${spendTable(document)}`);
  }
  return 0;
}

/** Through the running server holding the embedded store (its analytics API), else from the store itself. */
async function spendReport(options: SpendOptions): Promise<SpendDocument> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  const request = { ...options, from: isoOf(options.from), to: isoOf(options.to) };
  if (server) {
    const query = new URLSearchParams({ granularity: options.granularity, format: 'json' });
    if (request.from !== undefined && request.to !== undefined) {
      query.set('from', request.from);
      query.set('to', request.to);
    }
    if (options.groupBy.length) query.set('groupBy', options.groupBy.join(','));
    for (const [dimension, value] of Object.entries(options.filters)) query.set(dimension, value);
    return server.get<SpendDocument>(`/admin/v1/analytics/spend?${query}`);
  }
  const query = resolveSpendRequest(request);
  // A read: the ledger (and ClickHouse when configured) without the platform's projections or provider secrets.
  const reader = await openLogReader(environment);
  const clickhouse = environment.clickhouseUrl ? new ClickHouseConnection(clickHouseSettings(environment.clickhouseUrl)) : null;
  try {
    return spendDocument(query, await new SpendReports(reader.database, clickhouse).report(query, 'auto'));
  } finally {
    await clickhouse?.close().catch(() => undefined);
    await reader.close();
  }
}

/** What a table shows; every column is in the CSV and the JSON. */
const TABLE_METRICS: ReadonlyArray<keyof SpendMetrics> = ['requests', 'attempts', 'inputTokens', 'outputTokens', 'costUsd', 'cacheHits', 'savedUsd'];

function spendTable(document: SpendDocument): string {
  const columnOf = new Map<string, string>(METRIC_COLUMNS.map(([metric, column]) => [metric, column]));
  const header = ['period', ...document.groupBy, ...TABLE_METRICS.map((metric) => columnOf.get(metric)!)];
  const line = (period: string, group: Partial<Record<SpendDimension, string>>, metrics: SpendMetrics) =>
    [period, ...document.groupBy.map((dimension) => group[dimension] ?? ''), ...TABLE_METRICS.map((metric) => String(metrics[metric]))];
  const body = document.rows.map((row) => line(row.period, row, row));
  const total = line('total', {}, document.totals);
  const lines = [header, ...body, total];
  const widths = header.map((_, column) => Math.max(...lines.map((cells) => cells[column].length)));
  // Text left, numbers right: decimal points line up because every amount has the ledger's 12 places.
  const numeric = header.map((_, column) => column > document.groupBy.length);
  const render = (cells: string[]) => cells.map((cell, column) => (numeric[column] ? cell.padStart(widths[column]) : cell.padEnd(widths[column]))).join('  ').trimEnd();
  return `${lines.map(render).join('\n')}\n`;
}

function filterText(filters: Partial<Record<SpendDimension, string>>): string {
  const entries = Object.entries(filters);
  return entries.length ? `; ${entries.map(([dimension, value]) => `${dimension} ${value}`).join(', ')}` : '';
}

/** `2026-03-01` and `2026-03-01T00:00:00Z` alike, as the ISO instant the API compares. */
function isoOf(value: string | undefined): string | undefined {
  return value === undefined ? undefined : new Date(value).toISOString();
}
