/**
 * `node dist/bench/profile/phases.js DIR/phases-<pid>.json`: where the gateway's requests spent their
 * wall time, step by step (what `phase-probe` recorded), for each stretch of steady load in the file —
 * a bench phase, or its warm-up — as P50 / P90 / P99 in ms. Then the durable projections' pages and the
 * collector's pauses, and how much longer a commit took when a page ran at the same time.
 */
import { readFileSync } from 'node:fs';
import { distribution } from '../measure/summary.js';
import type { PhaseRecord, PhaseSamples } from './phase-samples.js';

type Mark = keyof PhaseRecord;

/** Consecutive steps; a request lacking either end of one is left out of that row. */
const STEPS: Array<[string, Mark, Mark]> = [
  ['headers → handler (body, hooks, authentication)', 'start', 'handler'],
  ['handler → admitted (parse, limits, cache, plan)', 'handler', 'admitted'],
  ['admitted → upstream dispatch', 'admitted', 'dispatch'],
  ['dispatch → upstream headers', 'dispatch', 'upstreamHeaders'],
  ['  dispatch → written to the provider', 'dispatch', 'upstreamSent'],
  ['  written → upstream headers', 'upstreamSent', 'upstreamHeaders'],
  ['upstream headers → first write (SSE)', 'upstreamHeaders', 'firstWrite'],
  ['upstream headers → upstream end', 'upstreamHeaders', 'upstreamEnd'],
  ['upstream end → append queued', 'upstreamEnd', 'append'],
  ['append queued → committed', 'append', 'committed'],
  ['committed → response finished', 'committed', 'finish'],
  ['headers → first write', 'start', 'firstWrite'],
  ['headers → response finished', 'start', 'finish'],
];

/** A pause of this long between two requests' arrivals separates two stretches of load. */
const STRETCH_GAP_MS = 400;
const MIN_STRETCH = 200;

function spread(values: number[]): string {
  const d = distribution(values);
  return d ? `${d.p50.toFixed(3)} / ${d.p90.toFixed(3)} / ${d.p99.toFixed(3)}` : '–';
}

export function stretches(requests: readonly PhaseRecord[]): PhaseRecord[][] {
  const ordered = [...requests].sort((a, b) => a.start - b.start);
  const out: PhaseRecord[][] = [];
  let run: PhaseRecord[] = [];
  for (const record of ordered) {
    if (run.length > 0 && record.start - run[run.length - 1].start > STRETCH_GAP_MS) {
      out.push(run);
      run = [];
    }
    run.push(record);
  }
  if (run.length > 0) out.push(run);
  return out.filter((r) => r.length >= MIN_STRETCH);
}

function overlaps(intervals: ReadonlyArray<readonly [number, number]>, from: number, to: number): boolean {
  return intervals.some(([start, duration]) => start < to && start + duration > from);
}

export function render(samples: PhaseSamples): string {
  const lines: string[] = [];
  const pageSpans = samples.pages.map(([start, duration]) => [start, duration] as const);
  for (const run of stretches(samples.requests)) {
    const seconds = (run[run.length - 1].start - run[0].start) / 1000;
    lines.push(`\n**${run.length} requests at ${(run.length / Math.max(seconds, 0.001)).toFixed(0)}/s** (ms, P50 / P90 / P99)\n`);
    lines.push('| step | requests | ms |', '|---|---:|---:|');
    for (const [label, from, to] of STEPS) {
      const values = run.filter((r) => r[from] !== undefined && r[to] !== undefined).map((r) => r[to]! - r[from]!);
      if (values.length > 0) lines.push(`| ${label} | ${values.length} | ${spread(values)} |`);
    }
    const committed = run.filter((r) => r.append !== undefined && r.committed !== undefined);
    const during = committed.filter((r) => overlaps(pageSpans, r.append!, r.committed!));
    const apart = committed.filter((r) => !overlaps(pageSpans, r.append!, r.committed!));
    if (during.length > 0) {
      lines.push(`| append → committed, a projection page running meanwhile | ${during.length} | ${spread(during.map((r) => r.committed! - r.append!))} |`);
      lines.push(`| append → committed, no page running | ${apart.length} | ${spread(apart.map((r) => r.committed! - r.append!))} |`);
    }
    const first = run[0].start;
    const last = run[run.length - 1].finish ?? run[run.length - 1].start;
    const pages = samples.pages.filter(([start]) => start >= first && start <= last);
    const pauses = samples.pauses.filter(([start]) => start >= first && start <= last);
    if (pages.length > 0) {
      const byName = new Map<string, { durations: number[]; events: number }>();
      for (const [, duration, name, events] of pages) {
        const entry = byName.get(name) ?? { durations: [], events: 0 };
        entry.durations.push(duration);
        entry.events += events;
        byName.set(name, entry);
      }
      for (const [name, { durations, events }] of byName) {
        lines.push(`\npages of ${name}: ${durations.length}, ${(events / durations.length).toFixed(0)} events each on average, ${spread(durations)} ms`);
      }
    }
    const pauseTotal = pauses.reduce((sum, [, duration]) => sum + duration, 0);
    lines.push(`collector pauses: ${pauses.length}, ${pauseTotal.toFixed(1)} ms in all, longest ${pauses.length ? Math.max(...pauses.map(([, d]) => d)).toFixed(2) : 0} ms`);
  }
  return lines.join('\n');
}

if (process.argv[1]?.endsWith('phases.js')) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    process.stderr.write('usage: node dist/bench/profile/phases.js DIR/phases-<pid>.json …\n');
    process.exit(2);
  }
  for (const file of files) {
    const samples = JSON.parse(readFileSync(file, 'utf8')) as PhaseSamples;
    process.stdout.write(`# ${file} (gateway ${samples.pid})\n${render(samples)}\n`);
  }
}
