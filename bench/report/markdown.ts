import type { Mode } from '../load/sample.js';
import type { Phase } from '../options.js';
import type { BenchReport, TargetReport } from './bench-report.js';
import { Comparison } from './comparison.js';

/** The tables printed after a run and written next to its JSON, in a form docs/benchmarks.md can include. */
export function renderMarkdown(report: BenchReport): string {
  const comparison = new Comparison(report);
  const phases = report.plan.phases;
  const out: string[] = [];
  const m = report.machine;
  out.push(
    `Run ${report.at} · preset ${report.plan.preset} · ${report.plan.durationMs / 1000} s per phase · ${Math.round(report.durationS)} s in all · ` +
      `${m.cpus}× ${m.cpuModel} · Node ${m.node}${m.postgres ? ` · ${m.postgres}` : ''} · load average at start ${m.loadAverageStart.map((v) => v.toFixed(2)).join(' ')}` +
      contention(m),
  );
  if (report.plan.note) out.push('', `Note: ${report.plan.note}`);
  out.push('', 'Mock provider at 0 ms (12 chunks), the load generator and every target in processes of their own on the same machine.');

  const rows = comparison.measured();
  const skipped = report.targets.filter((t) => t.skipped || t.error);
  for (const mode of ['buffered', 'sse'] as Mode[]) {
    const closed = phases.filter((p) => p.mode === mode && p.loop === 'closed');
    if (closed.length === 0) continue;
    const pivot = closed.find((p) => p.level === 32) ?? closed[closed.length - 1];
    out.push('', `**Throughput, ${mode === 'sse' ? 'SSE' : 'buffered'}, closed loop** (requests/s; ratios at c=${pivot.level})`, '');
    const header = ['target', ...closed.map((p) => `c=${p.level}`), '× bare proxy', '× Portkey', 'errors'];
    const body = rows.filter((t) => t.phases.some((p) => p.mode === mode)).map((t) => [
      label(t),
      ...closed.map((p) => rps(comparison.throughput(t.id, p.id))),
      times(comparison.throughputRatio(t.id, 'bare', pivot.id)),
      times(comparison.throughputRatio(t.id, 'portkey', pivot.id)),
      errorCount(t, closed),
    ]);
    out.push(...table(header, body));
  }

  const open = phases.filter((p) => p.mode === 'buffered' && p.loop === 'open');
  if (open.length > 0) {
    out.push('', '**Latency added over the direct baseline, buffered, open loop** (ms, P50 / P99, from each request\'s scheduled time; against a direct run of the same phase just before, unless --unpaired; the direct row is its own absolute latency; a negative figure means the noise was larger than the difference)', '');
    const header = ['target', ...open.map((p) => `${p.level.toLocaleString('en-US')} rps`), 'late sends', 'errors'];
    const body = rows.filter((t) => open.some((p) => comparison.phase(t.id, p.id))).map((t) => [
      label(t),
      ...open.map((p) => {
        if (t.id === 'direct') {
          const latency = comparison.phase(t.id, p.id)?.load.latency;
          return latency ? `${ms(latency.p50)} / ${ms(latency.p99)}` : '–';
        }
        return `${signed(comparison.addedLatency(t.id, p.id, 'p50'))} / ${signed(comparison.addedLatency(t.id, p.id, 'p99'))}`;
      }),
      String(open.reduce((sum, p) => sum + (comparison.phase(t.id, p.id)?.load.late ?? 0), 0)),
      errorCount(t, open),
    ]);
    out.push(...table(header, body));
  }

  const sse = phases.filter((p) => p.mode === 'sse');
  if (sse.length > 0) {
    out.push('', '**SSE time to first byte** (ms, P50; in brackets the difference to the bare proxy; time to last byte P50 after the slash)', '');
    const header = ['target', ...sse.map(phaseLabel)];
    const body = rows.filter((t) => t.phases.some((p) => p.mode === 'sse')).map((t) => [
      label(t),
      ...sse.map((p) => {
        const load = comparison.phase(t.id, p.id)?.load;
        if (!load?.ttfb || !load.latency) return '–';
        const delta = t.id === 'bare' ? '' : ` (${signed(comparison.ttfbOverBare(t.id, p.id))})`;
        return `${ms(load.ttfb.p50)}${delta} / ${ms(load.latency.p50)}`;
      }),
    ]);
    out.push(...table(header, body));
  }

  const cpuPhases = phases.filter((p) => p.id === 'buffered:closed:32' || p.id === 'buffered:open:300');
  if (cpuPhases.length > 0) {
    // A projector column only when a -px variant ran: the gateway column is then its serving processes alone.
    const projector = rows.some((t) => t.phases.some((p) => p.perRequest.projectorCpuMs != null));
    // A broker column only when a -relay variant's broker ran on this machine; it stays out of the total.
    const broker = rows.some((t) => t.phases.some((p) => p.perRequest.brokerCpuMs != null));
    // A serving-thread column when measured (reports from before it have none).
    const serving = rows.some((t) => t.phases.some((p) => p.perRequest.servingThreadCpuMs != null));
    out.push('', `**CPU per successful request and memory** (ms of CPU from /proc utime+stime over the phase and its settling${projector ? ', and until the durable projections applied its events' : ''}; ${serving ? "serving thread = the gateway's main threads (event loops), a part of its column; " : ''}${projector ? 'projector = the switchyard projector process of a -px variant; ' : ''}PostgreSQL = backends of the run's own database; total = their sum${broker ? '; broker = the NATS server a -relay variant publishes to, on this machine, not in the total' : ''})`, '');
    const columns = (p: Phase) => [`${phaseLabel(p)} gateway`, ...(serving ? [`${phaseLabel(p)} serving thread`] : []), ...(projector ? [`${phaseLabel(p)} projector`] : []), `${phaseLabel(p)} PostgreSQL`, `${phaseLabel(p)} total`,
      ...(broker ? [`${phaseLabel(p)} broker`] : [])];
    const header = ['target', ...cpuPhases.flatMap(columns), 'peak RSS'];
    const body = rows.filter((t) => t.kind !== 'direct').map((t) => [
      label(t),
      ...cpuPhases.flatMap((p) => {
        const cpu = comparison.cpuPerRequest(t.id, p.id);
        return [ms(cpu?.targetCpuMs), ...(serving ? [ms(cpu?.servingThreadCpuMs)] : []), ...(projector ? [ms(cpu?.projectorCpuMs)] : []), ms(cpu?.postgresCpuMs), ms(cpu?.totalCpuMs),
          ...(broker ? [ms(cpu?.brokerCpuMs)] : [])];
      }),
      mb(Math.max(0, ...t.phases.map((p) => p.cpu.rssPeakMb ?? 0))),
    ]);
    out.push(...table(header, body));
  }

  const slow = rows.filter((t) => t.slowStreams);
  if (slow.length > 0) {
    const s = slow[0].slowStreams!.settings;
    out.push('', `**${s.streams.toLocaleString('en-US')} concurrent slow streams** (${s.chunks} chunks, ${s.chunkGapMs} ms apart, opened over ${s.rampMs / 1000} s; Switchyard routes them over ${s.deployments} deployment${s.deployments === 1 ? '' : 's'} of the mock; RSS of a -px variant is its gateway's and its projector's together)`, '');
    const header = ['target', 'all open at once', 'completed', 'RSS before', 'RSS with all open', 'peak RSS'];
    const body = slow.map((t) => {
      const r = t.slowStreams!;
      return [label(t), r.load.plateauReached ? 'yes' : `no (max ${r.load.maxConcurrent})`, `${r.load.ok} / ${r.settings.streams}`, mb(r.rssBeforeMb), mb(r.rssAtPlateauMb), mb(r.rssPeakMb)];
    });
    out.push(...table(header, body));
  }

  const goals = comparison.goals();
  if (goals.length > 0) {
    out.push('', '**Issue 9 goals** (reported, not asserted)', '');
    out.push(...table(['variant', 'goal', 'measured', 'met'], goals.map((g) => [g.variant, g.goal, g.measured ?? 'not run', g.met === null ? '–' : g.met ? 'yes' : 'no']), 4));
  }

  const notes = runNotes(report);
  if (skipped.length > 0 || notes.length > 0) {
    out.push('');
    for (const t of skipped) out.push(`- ${t.id}: ${t.skipped ? `skipped, ${t.skipped}` : `failed, ${t.error?.split('\n')[0]}`}`);
    out.push(...notes.map((n) => `- ${n}`));
  }
  return `${out.join('\n')}\n`;
}

/** Where a figure may be bounded by the bench itself rather than by the target. */
function runNotes(report: BenchReport): string[] {
  const notes: string[] = [];
  for (const target of report.targets) {
    for (const phase of target.phases) {
      if (phase.cpu.generatorCoreShare > 0.9) notes.push(`${target.id} ${phase.id}: the load generator used ${Math.round(phase.cpu.generatorCoreShare * 100)}% of a core (generator-bound)`);
      // A starved generator (the machine busy with other work) is late without using much CPU itself.
      const lateShare = phase.load.issued > 0 ? phase.load.late / phase.load.issued : 0;
      if (lateShare > 0.05) {
        notes.push(`${target.id} ${phase.id}: ${Math.round(lateShare * 100)}% of the requests were sent more than ${phase.load.lateMs} ms late (P99 ${phase.load.issueLag?.p99} ms): the generator could not hold the rate, so these figures measure the machine as much as the target`);
      }
      if (phase.upstreamCalls < phase.load.ok) notes.push(`${target.id} ${phase.id}: ${phase.load.ok} successes but only ${phase.upstreamCalls} mock calls (answers not from the mock)`);
      if (phase.load.unsent > 0) notes.push(`${target.id} ${phase.id}: ${phase.load.unsent} requests never sent before the drain deadline`);
      const caughtUp = phase.cpu.projections;
      if (caughtUp && caughtUp.caughtUpMs === null) {
        notes.push(`${target.id} ${phase.id}: the durable projections were still ${caughtUp.behindAtEnd} events behind when the meter stopped waiting for them: CPU per request leaves out the rest of their work`);
      }
    }
  }
  return notes;
}

/** Text in the first `textColumns` columns (left-aligned), figures after them (right-aligned). */
function table(header: string[], rows: string[][], textColumns = 1): string[] {
  return [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i < textColumns ? '---' : '---:')).join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)];
}

function label(target: TargetReport): string {
  if (target.kind === 'direct') return 'direct (no gateway)';
  if (target.kind === 'bare') return 'bare undici proxy';
  if (target.kind === 'portkey') return `Portkey ${String(target.details?.version ?? '')}`.trim();
  return `Switchyard ${target.id.slice('switchyard:'.length)}`;
}

function phaseLabel(phase: Phase): string {
  return phase.loop === 'closed' ? `c=${phase.level}` : `${phase.level.toLocaleString('en-US')} rps`;
}

function errorCount(target: TargetReport, phases: Phase[]): string {
  let errors = 0;
  for (const phase of phases) {
    const load = target.phases.find((p) => p.id === phase.id)?.load;
    if (load) errors += Object.values(load.errors).reduce((a, b) => a + b, 0);
  }
  return String(errors);
}

const rps = (value: number | null) => (value === null ? '–' : Math.round(value).toLocaleString('en-US'));
const times = (value: number | null) => (value === null ? '–' : `${value.toFixed(2)}×`);
const ms = (value: number | null | undefined) => (value === null || value === undefined ? '–' : value.toFixed(value < 1 ? 3 : 2));
const mb = (value: number | null | undefined) => (value === null || value === undefined || value === 0 ? '–' : `${value} MB`);
const signed = (value: number | null) => (value === null ? '–' : `${value >= 0 ? '+' : ''}${value.toFixed(2)}`);

/** The machine's steal and CPU pressure over the run, where the kernel reports them. */
function contention(m: BenchReport['machine']): string {
  const parts: string[] = [];
  if (m.stealShare !== undefined && m.stealShare !== null) parts.push(`steal ${percent(m.stealShare)}`);
  if (m.cpuPressureStart !== undefined && m.cpuPressureStart !== null) {
    const end = m.cpuPressureEnd !== undefined && m.cpuPressureEnd !== null ? `, ${percent(m.cpuPressureEnd)} at the end` : '';
    parts.push(`CPU pressure (some, avg60) ${percent(m.cpuPressureStart)} at start${end}`);
  }
  return parts.map((part) => ` · ${part}`).join('');
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}
