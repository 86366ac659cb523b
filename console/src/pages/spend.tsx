import { useMemo, useState } from 'preact/hooks';
import { api, download } from '../api.js';
import { RankBars, TimeChart } from '../components/chart.js';
import { Button, ErrorNotice, Field, Loading, PageHeader, Section } from '../components/ui.js';
import { count, usd } from '../format.js';
import { useResource } from '../resource.js';
import type { SpendDocument, SpendRow } from '../types.js';

const DIMENSIONS = ['tenant', 'model', 'alias'] as const;
type Dimension = (typeof DIMENSIONS)[number];
const DAY = 86_400_000;
const SERIES_SHOWN = 6;

/** Spend from /admin/v1/analytics/spend: over time by tenant, model or alias, the rankings, cache savings, CSV. */
export function SpendPage() {
  const [days, setDays] = useState(30);
  const [granularity, setGranularity] = useState<'day' | 'week'>('day');
  const [dimension, setDimension] = useState<Dimension>('tenant');
  const range = useMemo(() => rangeOf(days, granularity), [days, granularity]);
  const key = `${range.from}|${range.to}|${granularity}`;
  const reports = useResource(async (signal) => {
    const answers = await Promise.all(DIMENSIONS.map((groupBy) =>
      api<SpendDocument>('/admin/v1/analytics/spend', { signal, query: { ...range, granularity, groupBy } })));
    return Object.fromEntries(DIMENSIONS.map((d, i) => [d, answers[i]])) as Record<Dimension, SpendDocument>;
  }, key);
  const [exporting, setExporting] = useState<unknown>(null);
  const exportCsv = async () => {
    setExporting(null);
    try {
      await download('/admin/v1/analytics/spend', { ...range, granularity, groupBy: dimension, format: 'csv' }, `spend-${granularity}.csv`);
    } catch (error) {
      setExporting(error);
    }
  };
  const data = reports.data;
  const chosen = data?.[dimension];
  const chart = useMemo(() => (chosen ? seriesOf(chosen, dimension) : null), [chosen, dimension]);
  return (
    <>
      <PageHeader title="Spend">
        <Button variant="secondary" onClick={exportCsv}>Export CSV</Button>
      </PageHeader>
      <form class="filters" aria-label="Spend range" onSubmit={(e) => e.preventDefault()}>
        <Field id="spend-range" label="Range">
          <select id="spend-range" value={String(days)} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            <option value="7">last 7 days</option><option value="30">last 30 days</option><option value="90">last 90 days</option>
          </select>
        </Field>
        <Field id="spend-granularity" label="Per">
          <select id="spend-granularity" value={granularity} onChange={(e) => setGranularity(e.currentTarget.value as 'day' | 'week')}>
            <option value="day">day</option><option value="week">week</option>
          </select>
        </Field>
        <Field id="spend-dimension" label="Chart by">
          <select id="spend-dimension" value={dimension} onChange={(e) => setDimension(e.currentTarget.value as Dimension)}>
            {DIMENSIONS.map((d) => <option key={d} value={d}>{d}</option>)}
          </select>
        </Field>
      </form>
      <ErrorNotice error={reports.error ?? exporting} />
      {!data || !chosen || !chart ? (reports.error ? null : <Loading />) : (
        <>
          <div class="tiles">
            <Tile label="Spend" value={money(Number(chosen.totals.costUsd))} />
            {/* Requests with a billable attempt (the API's `requests`); those the cache answered are the next tile but one. */}
            <Tile label="Billed requests" value={count(chosen.totals.requests)} />
            <Tile label="Tokens in / out" value={`${count(chosen.totals.inputTokens)} / ${count(chosen.totals.outputTokens)}`} />
            <Tile label="Cache hits" value={count(chosen.totals.cacheHits)} />
            <Tile label="Saved by the cache" value={money(Number(chosen.totals.savedUsd))} />
          </div>
          <Section title={`Spend per ${granularity} by ${dimension}`}>
            <p class="muted small">{`${chosen.from.slice(0, 10)} to ${chosen.to.slice(0, 10)} (UTC) · source: ${chosen.source}`}</p>
            <TimeChart title={`Spend per ${granularity} by ${dimension}`} x={chart.x} series={chart.series} bars format={money} />
          </Section>
          <div class="grid-3">
            {DIMENSIONS.map((d) => (
              <Section key={d} title={`By ${d}`}>
                <RankBars title={`Spend by ${d}`} rows={ranking(data[d].rows, d)} format={money} />
              </Section>
            ))}
          </div>
        </>
      )}
    </>
  );
}

/** Chart values: cents for amounts above a dollar, more digits for the fractions of a cent a test gateway spends. */
function money(value: number): string {
  return usd(value, Math.abs(value) >= 1 || value === 0 ? 2 : 6);
}

function Tile({ label, value }: { label: string; value: string }) {
  return <div class="tile"><p class="tile-label">{label}</p><p class="tile-value">{value}</p></div>;
}

/** Whole UTC days ending today; a weekly range starts on a Monday, as the API's weeks do. */
function rangeOf(days: number, granularity: 'day' | 'week'): { from: string; to: string } {
  const today = Math.floor(Date.now() / DAY) * DAY;
  let from = today - (days - 1) * DAY;
  let to = today + DAY;
  if (granularity === 'week') {
    const monday = (time: number) => time - ((new Date(time).getUTCDay() + 6) % 7) * DAY;
    from = monday(from);
    to = monday(today) + 7 * DAY;
  }
  return { from: new Date(from).toISOString().replace('.000Z', 'Z'), to: new Date(to).toISOString().replace('.000Z', 'Z') };
}

function ranking(rows: SpendRow[], dimension: Dimension) {
  const totals = new Map<string, number>();
  for (const row of rows) totals.set(row[dimension] || '(none)', (totals.get(row[dimension] || '(none)') ?? 0) + Number(row.costUsd));
  return [...totals.entries()].map(([label, value]) => ({ label, value })).sort((a, b) => b.value - a.value).slice(0, 10);
}

/** One series per group (the biggest few; the rest summed as "others"), on the periods of the answer. */
function seriesOf(document: SpendDocument, dimension: Dimension) {
  const rows = document.rows;
  // Every period of the range, the empty ones as zero: a gap is a day without spend, not a missing point.
  const step = document.granularity === 'week' ? 7 * DAY : DAY;
  const periods: string[] = [];
  for (let time = Date.parse(document.from); time < Date.parse(document.to); time += step) periods.push(new Date(time).toISOString().slice(0, 10));
  const top = ranking(rows, dimension).slice(0, SERIES_SHOWN).map((r) => r.label);
  const names = rows.some((row) => !top.includes(row[dimension] || '(none)')) ? [...top, 'others'] : top;
  const values = new Map(names.map((name) => [name, periods.map(() => 0)]));
  for (const row of rows) {
    const name = top.includes(row[dimension] || '(none)') ? (row[dimension] || '(none)') : 'others';
    const index = periods.indexOf(row.period.slice(0, 10));
    if (index >= 0) values.get(name)![index] += Number(row.costUsd);
  }
  return {
    x: periods.map((period) => Date.parse(`${period}T00:00:00Z`) / 1000),
    series: names.map((name) => ({ label: name, values: values.get(name)! })),
  };
}
