import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: Array<number | null>;
}

/** Colours with at least 3:1 contrast on the card background, distinguishable in the common colour-vision deficiencies. */
const PALETTE = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2', '#65a30d', '#dc2626'];

/** The spacing of the points (their smallest gap), an hour when there is one point. */
function step(x: number[]): number {
  let smallest = Infinity;
  for (let i = 1; i < x.length; i++) smallest = Math.min(smallest, x[i] - x[i - 1]);
  return Number.isFinite(smallest) && smallest > 0 ? smallest : 3600;
}

/** The y axis's width for its labels, in CSS pixels (the chart's 12 px system font is about 7 px a character). */
function axisWidth(_u: uPlot, values: string[] | null): number {
  const longest = Math.max(0, ...(values ?? []).map((value) => String(value).length));
  return Math.max(48, Math.ceil(longest * 7.2) + 20);
}

/**
 * A time-series chart (uPlot, drawn on a canvas): x in Unix seconds. The same numbers are offered as a table
 * below it for keyboard and screen-reader users, since a canvas says nothing to them.
 */
export function TimeChart({ title, x, series, format, bars = false, height = 240 }: {
  title: string; x: number[]; series: ChartSeries[]; format: (value: number) => string; bars?: boolean; height?: number;
}) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (!element || x.length === 0) return;
    const paths = bars ? uPlot.paths.bars!({ size: [0.6, 64] }) : undefined;
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 320),
      height,
      legend: { show: true },
      cursor: { points: { show: !bars } },
      // Bars are centred on their time: half a step of room each side keeps the first and the last one whole.
      scales: { x: bars ? { time: true, range: (_u, min, max) => [min - step(x) / 2, max + step(x) / 2] } : { time: true } },
      axes: [
        { stroke: '#475569', grid: { stroke: '#e2e8f0' } },
        // As wide as its longest label (a cost of a fraction of a cent is long): a fixed width cut their left off.
        { stroke: '#475569', grid: { stroke: '#e2e8f0' }, size: axisWidth, values: (_u, ticks) => ticks.map((tick) => format(tick)) },
      ],
      series: [
        {},
        ...series.map((s, index) => ({
          label: s.label,
          stroke: PALETTE[index % PALETTE.length],
          fill: bars ? `${PALETTE[index % PALETTE.length]}cc` : `${PALETTE[index % PALETTE.length]}22`,
          width: 2,
          paths,
          // A bar is its own mark; uPlot's point markers would sit on every empty day's baseline.
          ...(bars ? { points: { show: false } } : {}),
          value: (_u: uPlot, value: number | null) => (value === null ? '—' : format(value)),
        })),
      ],
    };
    const plot = new uPlot(options, [x, ...series.map((s) => s.values)] as uPlot.AlignedData, element);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(element.clientWidth, 320), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [x, series, bars, height, format]);
  if (x.length === 0) return <p class="empty">No data in this range.</p>;
  return (
    <figure class="chart">
      <div ref={holder} class="chart-canvas" role="img" aria-label={`${title}: chart; the same data is in the table below`} />
      <details class="chart-table">
        <summary>{`${title} as a table`}</summary>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Period</th>
                {series.map((s) => <th key={s.label} scope="col">{s.label}</th>)}
              </tr>
            </thead>
            <tbody>
              {x.map((time, row) => (
                <tr key={time}>
                  <th scope="row">{new Date(time * 1000).toISOString().slice(0, 16).replace('T', ' ')}</th>
                  {series.map((s) => <td key={s.label} class="num">{s.values[row] === null ? '—' : format(s.values[row]!)}</td>)}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

/** Horizontal bars for a ranking (spend by tenant, model, alias): plain elements, readable as a list. */
export function RankBars({ title, rows, format }: { title: string; rows: Array<{ label: string; value: number }>; format: (value: number) => string }) {
  if (rows.length === 0) return <p class="empty">No data in this range.</p>;
  const max = Math.max(...rows.map((row) => row.value), 0) || 1;
  return (
    <ol class="rank-bars" aria-label={title}>
      {rows.map((row) => (
        <li key={row.label}>
          <span class="rank-label" title={row.label}>{row.label}</span>
          <span class="rank-track" aria-hidden="true"><span class="rank-fill" style={{ width: `${(row.value / max) * 100}%` }} /></span>
          <span class="rank-value">{format(row.value)}</span>
        </li>
      ))}
    </ol>
  );
}
