/**
 * What the gateway's thread did between two of a request's marks: the CPU profile's samples that fall
 * between them, summed over every request that reached both, as `summarize` prints them, per request.
 * A phase table says a step takes 0.135 ms; this says which functions (or idleness: waiting on another
 * process) make it up. Both files come from one run with --gateway-phases and --gateway-profile:
 *
 *   node dist/bench/profile/between.js DIR/phases-<pid>.json DIR/gateway-<pid>.cpuprofile FROM TO [--under MS] [rows]
 *
 * FROM and TO are mark names (start, handler, admitted, dispatch, upstreamSent, upstreamHeaders,
 * upstreamEnd, append, committed, firstWrite, finish). `--under MS` keeps only requests whose step took
 * less than MS: the typical request, without the few that waited behind a projection page or a collection.
 * Both profiler and probe slow the gateway down; compare shares, not absolute times, with other runs.
 */
import { readFileSync } from 'node:fs';
import type { PhaseRecord, PhaseSamples } from './phase-samples.js';
import { type Profile, summarizeSelfTime } from './summarize.js';

type Mark = keyof PhaseRecord;

export interface BetweenOptions {
  /** Keep only steps shorter than this (ms). */
  underMs?: number;
  rows?: number;
}

/** The windows [from, to] (ms, the marks' clock) of every request that reached both marks, in order. */
export function windowsBetween(requests: readonly PhaseRecord[], from: Mark, to: Mark, underMs = Infinity): Array<[number, number]> {
  const windows: Array<[number, number]> = [];
  for (const record of requests) {
    const start = record[from];
    const end = record[to];
    if (start === undefined || end === undefined || end < start || end - start >= underMs) continue;
    windows.push([start, end]);
  }
  return windows.sort((a, b) => a[0] - b[0]);
}

/**
 * The samples inside the windows, as self time by node. A sample covers the interval since the one before
 * it (V8's `timeDeltas`), and is counted when it was taken inside a window. Windows may overlap (c > 1):
 * a sample is counted once.
 */
export function selfTimeBetween(profile: Profile, hrOffsetUs: number, windows: ReadonlyArray<[number, number]>): Map<number, number> {
  const self = new Map<number, number>();
  if (profile.startTime === undefined) throw new Error('the CPU profile has no startTime');
  let at = profile.startTime;
  // Windows sorted by start: those that can still hold a sample are from `first` on, up to the ones started.
  let first = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    const ms = (at - hrOffsetUs) / 1e3;
    while (first < windows.length && windows[first][1] < ms) first++;
    let inside = false;
    for (let w = first; w < windows.length && windows[w][0] <= ms; w++) {
      if (windows[w][1] >= ms) {
        inside = true;
        break;
      }
    }
    if (inside) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + delta);
  }
  return self;
}

export function between(samples: PhaseSamples, profile: Profile, from: Mark, to: Mark, options: BetweenOptions = {}): string {
  if (samples.hrOffsetUs === undefined) throw new Error('the phases file predates hrOffsetUs: run the bench again with --gateway-phases');
  const windows = windowsBetween(samples.requests, from, to, options.underMs);
  if (windows.length === 0) return `no request reached both ${from} and ${to}`;
  const self = selfTimeBetween(profile, samples.hrOffsetUs, windows);
  const spans = windows.map(([start, end]) => end - start).sort((a, b) => a - b);
  const p50 = spans[Math.floor(spans.length / 2)];
  return [
    `${from} → ${to}: ${windows.length} requests, P50 ${p50.toFixed(3)} ms; per request below (the headline's "per request" is per such step)`,
    summarizeSelfTime(profile.nodes, self, windows.length, options.rows ?? 25),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const under = args.indexOf('--under');
  const underMs = under >= 0 ? Number(args.splice(under, 2)[1]) : undefined;
  const [phasesFile, profileFile, from, to, rows] = args;
  if (!phasesFile || !profileFile || !from || !to || (underMs !== undefined && !(underMs > 0))) {
    console.error('usage: node dist/bench/profile/between.js PHASES.json PROFILE.cpuprofile FROM TO [--under MS] [rows]');
    process.exit(2);
  }
  const samples = JSON.parse(readFileSync(phasesFile, 'utf8')) as PhaseSamples;
  const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as Profile;
  console.log(between(samples, profile, from as Mark, to as Mark, { underMs, rows: rows ? Number(rows) : undefined }));
}
