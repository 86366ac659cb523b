import { useRef } from 'preact/hooks';
import { api } from '../api.js';
import { TimeChart } from '../components/chart.js';
import { ErrorNotice, Loading, PageHeader, Progress, Section, StatusBadge, Empty } from '../components/ui.js';
import { count, ms, usd } from '../format.js';
import { useResource } from '../resource.js';
import type { Overview } from '../types.js';

const REFRESH_MS = 5_000;
const KEPT_POINTS = 120;

/** The gateway at a glance, refreshed every few seconds; requests/s is charted from what this page has seen. */
export function OverviewPage() {
  const history = useRef<{ x: number[]; rps: number[]; p95: Array<number | null> }>({ x: [], rps: [], p95: [] });
  const overview = useResource(async (signal) => {
    const answer = await api<Overview>('/admin/v1/overview', { signal });
    const h = history.current;
    h.x = [...h.x, Math.floor(Date.now() / 1000)].slice(-KEPT_POINTS);
    h.rps = [...h.rps, answer.requestsPerSecond].slice(-KEPT_POINTS);
    h.p95 = [...h.p95, answer.latencyMs.p95].slice(-KEPT_POINTS);
    return answer;
  }, 'overview', REFRESH_MS);
  const data = overview.data;
  return (
    <>
      <PageHeader title="Overview">
        <span class="muted live" aria-live="off">{`Live · every ${REFRESH_MS / 1000} s`}</span>
      </PageHeader>
      <ErrorNotice error={overview.error} />
      {!data ? (overview.error ? null : <Loading />) : (
        <>
          <div class="tiles">
            <Tile label="Requests / s" value={data.requestsPerSecond.toLocaleString('en-US', { maximumFractionDigits: 2 })} note={`over the last ${data.window.seconds} s`} />
            <Tile label="Latency P50" value={ms(data.latencyMs.p50)} />
            <Tile label="Latency P95" value={ms(data.latencyMs.p95)} />
            <Tile label="Spend today" value={usd(data.spend.todayUsd, 2)} note={spendTrend(data.spend.todayUsd, data.spend.yesterdayUsd)} />
            <Tile label="Errors" value={count(Object.values(data.errorsByClass).reduce((sum, n) => sum + n, 0))} note={`over the last ${data.window.seconds} s`} />
          </div>
          <div class="grid-2">
            <Section title="Traffic">
              {history.current.x.length < 2 ? <p class="muted">Collecting the first points…</p> : <TimeChart title="Requests per second" x={history.current.x} series={[{ label: 'requests/s', values: history.current.rps }]}
                format={(value) => value.toLocaleString('en-US', { maximumFractionDigits: 2 })} height={200} />}
            </Section>
            <Section title="Errors by class">
              {Object.keys(data.errorsByClass).length === 0 ? <Empty>No errors in the window.</Empty> : (
                <table>
                  <thead><tr><th scope="col">Class</th><th scope="col" class="num">Count</th></tr></thead>
                  <tbody>
                    {Object.entries(data.errorsByClass).sort((a, b) => b[1] - a[1]).map(([errorClass, n]) => (
                      <tr key={errorClass}><td><code>{errorClass}</code></td><td class="num">{count(n)}</td></tr>
                    ))}
                  </tbody>
                </table>
              )}
            </Section>
            <Section title="Circuit breakers">
              {data.breakers.length === 0 ? <Empty>No deployments.</Empty> : (
                <table>
                  <thead><tr><th scope="col">Deployment</th><th scope="col">State</th></tr></thead>
                  <tbody>{data.breakers.map((b) => <tr key={b.deploymentId}><td>{b.deploymentId}</td><td><StatusBadge status={b.state} /></td></tr>)}</tbody>
                </table>
              )}
            </Section>
            <Section title="Projections">
              <table>
                <thead><tr><th scope="col">Projection</th><th scope="col" class="num">Behind (events)</th><th scope="col" class="num">Lag</th><th scope="col">Status</th></tr></thead>
                <tbody>
                  {data.projections.map((p) => (
                    <tr key={p.name}>
                      <td>{p.name}</td>
                      <td class="num">{count(p.lagEvents)}</td>
                      <td class="num">{p.lagSeconds === null ? '—' : `${p.lagSeconds.toLocaleString('en-US', { maximumFractionDigits: 1 })} s`}</td>
                      <td><StatusBadge status={p.status} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </Section>
          </div>
          <Section title="Budget alerts">
            {data.budgetAlerts.length === 0 ? <Empty>No tenant is near its budget.</Empty> : (
              <table>
                <thead><tr><th scope="col">Tenant</th><th scope="col">Period</th><th scope="col" class="num">Spent</th><th scope="col" class="num">Budget</th><th scope="col">Used</th></tr></thead>
                <tbody>
                  {data.budgetAlerts.map((alert) => (
                    <tr key={`${alert.tenantId}-${alert.period}`}>
                      <td>{alert.tenantId}</td><td>{alert.period}</td><td class="num">{usd(alert.spentUsd)}</td><td class="num">{usd(alert.limitUsd, 2)}</td>
                      <td><Progress value={alert.ratio * 100} label={`Budget of ${alert.tenantId} used`} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </Section>
        </>
      )}
    </>
  );
}

function Tile({ label, value, note }: { label: string; value: string; note?: string }) {
  return (
    <div class="tile">
      <p class="tile-label">{label}</p>
      <p class="tile-value">{value}</p>
      {note ? <p class="tile-note">{note}</p> : null}
    </div>
  );
}

function spendTrend(today: string | number, yesterday: string | number): string {
  const t = Number(today);
  const y = Number(yesterday);
  if (!Number.isFinite(t) || !Number.isFinite(y)) return '';
  if (y === 0) return `yesterday ${usd(y, 2)}`;
  const change = ((t - y) / y) * 100;
  return `${change >= 0 ? '▲' : '▼'} ${Math.abs(change).toFixed(0)}% against yesterday (${usd(y, 2)})`;
}
