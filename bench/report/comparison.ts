import type { Distribution } from '../measure/summary.js';
import { round3 } from '../measure/summary.js';
import type { BenchReport, PhaseReport, TargetReport } from './bench-report.js';

/**
 * The figures users compare gateways by, derived from a report: ratios to the bare proxy and to
 * Portkey, latency added over the direct baseline, CPU per request. Pure, so it is tested on fixtures.
 */
export class Comparison {
  constructor(private readonly report: BenchReport) {}

  get targets(): TargetReport[] {
    return this.report.targets;
  }

  measured(): TargetReport[] {
    return this.report.targets.filter((t) => !t.skipped && !t.error);
  }

  phase(targetId: string, phaseId: string): PhaseReport | undefined {
    return this.report.targets.find((t) => t.id === targetId)?.phases.find((p) => p.id === phaseId);
  }

  throughput(targetId: string, phaseId: string): number | null {
    const phase = this.phase(targetId, phaseId);
    return phase ? phase.load.throughputRps : null;
  }

  /** Throughput of `targetId` over that of `baselineId` in the same phase. */
  throughputRatio(targetId: string, baselineId: string, phaseId: string): number | null {
    return ratio(this.throughput(targetId, phaseId), this.throughput(baselineId, phaseId));
  }

  /**
   * Latency the target adds over the direct baseline at one percentile (difference of percentiles),
   * against the baseline paired with the phase when there is one, else the direct target's own phase.
   */
  addedLatency(targetId: string, phaseId: string, pick: keyof Distribution, of: 'latency' | 'ttfb' = 'latency'): number | null {
    const phase = this.phase(targetId, phaseId);
    const baseline = phase?.baseline ?? this.phase('direct', phaseId)?.load;
    return difference(phase?.load[of]?.[pick], baseline?.[of]?.[pick]);
  }

  /** SSE time to first byte of the target minus the bare proxy's, same phase, at P50. */
  ttfbOverBare(targetId: string, phaseId: string, pick: keyof Distribution = 'p50'): number | null {
    return difference(this.phase(targetId, phaseId)?.load.ttfb?.[pick], this.phase('bare', phaseId)?.load.ttfb?.[pick]);
  }

  cpuPerRequest(targetId: string, phaseId: string): PhaseReport['perRequest'] | null {
    return this.phase(targetId, phaseId)?.perRequest ?? null;
  }

  goals(): GoalCheck[] {
    const checks: GoalCheck[] = [];
    for (const target of this.measured().filter((t) => t.kind === 'switchyard')) {
      const variant = target.id.slice('switchyard:'.length);
      const isAsync = variant.includes('-async');
      const isDefault = variant.includes('-default');
      const onPostgres = variant.startsWith('pg-');
      const c32 = 'buffered:closed:32';
      if (isDefault) {
        checks.push(atLeast(variant, 'c=32 buffered throughput ≥ 5× Portkey', this.throughputRatio(target.id, 'portkey', c32), 5, '×'));
        checks.push(atLeast(variant, `c=32 buffered throughput ≥ ${onPostgres ? '0.35' : '0.25'}× bare proxy`, this.throughputRatio(target.id, 'bare', c32), onPostgres ? 0.35 : 0.25, '×'));
      }
      if (isAsync) checks.push(atLeast(variant, 'c=32 buffered throughput ≥ 0.5× bare proxy (async)', this.throughputRatio(target.id, 'bare', c32), 0.5, '×'));
      const open300 = 'buffered:open:300';
      if (isDefault || isAsync) {
        const limit = isAsync ? 0.3 : 1.0;
        checks.push(addedAtMost(variant, `added P50 at 300 rps ≤ ${limit} ms`, this.addedLatency(target.id, open300, 'p50'), limit));
      }
      checks.push(addedAtMost(variant, 'added P99 at 300 rps ≤ 5 ms', this.addedLatency(target.id, open300, 'p99'), 5));
      checks.push(atMost(variant, 'SSE TTFB at c=1 ≤ bare proxy + 0.5 ms', this.ttfbOverBare(target.id, 'sse:closed:1'), 0.5, ' ms'));
      const cpu = this.cpuPerRequest(target.id, c32);
      const parts = variant.endsWith('-px') ? 'gateway + projector + PostgreSQL' : 'gateway + PostgreSQL';
      checks.push(atMost(variant, `CPU per request at c=32 (${parts}) ≤ 0.15 ms`, cpu?.totalCpuMs ?? null, 0.15, ' ms'));
      if (target.slowStreams) {
        const slow = target.slowStreams;
        const held = slow.load.plateauReached && slow.load.ok === slow.settings.streams;
        checks.push({
          variant,
          goal: `${slow.settings.streams} concurrent slow streams under 300 MB RSS`,
          measured: slow.rssPeakMb === null ? null : `${slow.rssPeakMb} MB peak${held ? '' : ` (${slow.load.ok} of ${slow.settings.streams} completed${slow.load.plateauReached ? '' : ', never all open at once'})`}`,
          met: slow.rssPeakMb === null ? null : held && slow.rssPeakMb < 300,
        });
      }
    }
    return checks;
  }
}

export interface GoalCheck {
  variant: string;
  goal: string;
  /** null: the phase it needs was not run (or a target it compares with was not). */
  measured: string | null;
  met: boolean | null;
}

function atLeast(variant: string, goal: string, value: number | null, limit: number, unit: string): GoalCheck {
  return { variant, goal, measured: value === null ? null : `${value}${unit}`, met: value === null ? null : value >= limit };
}

function atMost(variant: string, goal: string, value: number | null, limit: number, unit: string): GoalCheck {
  return { variant, goal, measured: value === null ? null : `${value}${unit}`, met: value === null ? null : value <= limit };
}

/**
 * A latency the gateway adds is its percentile minus the direct baseline's. Below zero, the baseline was the
 * slower of the two (the machine stalled during it): that says nothing about the gateway, so it is shown and
 * not judged, rather than counted as a goal met.
 */
function addedAtMost(variant: string, goal: string, value: number | null, limit: number): GoalCheck {
  if (value !== null && value < 0) return { variant, goal, measured: `${value} ms (the direct baseline was slower: noise, not judged)`, met: null };
  return atMost(variant, goal, value, limit, ' ms');
}

export function ratio(value: number | null | undefined, baseline: number | null | undefined): number | null {
  if (value === null || value === undefined || !baseline) return null;
  return Math.round((value / baseline) * 100) / 100;
}

export function difference(value: number | null | undefined, baseline: number | null | undefined): number | null {
  if (value === null || value === undefined || baseline === null || baseline === undefined) return null;
  return round3(value - baseline);
}
