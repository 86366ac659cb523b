import type { LoadResult, LoopKind, Mode } from '../load/sample.js';
import type { SlowStreamsResult } from '../load/slow-streams.js';
import type { PhaseCpu } from '../measure/phase-meter.js';
import type { CatchUp } from '../measure/projection-lag.js';
import type { BenchPlan } from '../options.js';
import type { TargetKind } from '../targets/target.js';

/** What bench/results/<time>.json holds: everything measured, and how. */
export interface BenchReport {
  at: string;
  machine: MachineInfo;
  plan: BenchPlan;
  method: Record<string, string>;
  targets: TargetReport[];
  durationS: number;
}

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryMb: number;
  kernel: string;
  node: string;
  postgres: string | null;
  loadAverageStart: number[];
  loadAverageEnd: number[];
  clockTicksPerSecond: number;
  /** The host's steal over the whole run, as a share of all CPU time (null where /proc/stat has none). */
  stealShare?: number | null;
  /** /proc/pressure/cpu `some avg60` at the start and the end of the run (null without PSI). */
  cpuPressureStart?: number | null;
  cpuPressureEnd?: number | null;
}

export interface TargetReport {
  id: string;
  kind: TargetKind;
  /** Why it was not measured (not installed, the gateway ignored a setting, …). */
  skipped?: string;
  /** It failed to start or to answer correctly. */
  error?: string;
  details?: Record<string, unknown>;
  verification?: Partial<Record<Mode, Verification>>;
  /** Unmeasured load sent before the mode's phases. */
  warmup?: Partial<Record<Mode, { requests: number; ms: number }>>;
  /** RSS right after it started and answered (start-up may leave it above what it settles to). */
  rssAfterStartMb?: number | null;
  phases: PhaseReport[];
  slowStreams?: SlowStreamsReport;
}

export interface Verification {
  /** Calls the mock received for one request through the target (1 = it really went upstream). */
  upstreamCalls: number;
  /** The answer's content equals what the mock says when called directly. */
  answerMatches: boolean;
}

export interface PhaseReport {
  id: string;
  mode: Mode;
  loop: LoopKind;
  level: number;
  load: LoadResult;
  cpu: PhaseCpu;
  /** Calls the mock received during the phase (≥ successful requests; more means retries). */
  upstreamCalls: number;
  /**
   * CPU ms per successful request: the gateway's processes, a -px variant's projector (null otherwise),
   * PostgreSQL's backends, and their sum; apart from the sum, a -relay variant's broker when it runs on this machine,
   * and the gateway's main threads (its event loops: a part of the gateway's; absent in reports before it was measured).
   */
  perRequest: { targetCpuMs: number | null; servingThreadCpuMs?: number | null; projectorCpuMs?: number | null; brokerCpuMs?: number | null; postgresCpuMs: number | null; totalCpuMs: number | null };
  /** The durable projections catching up with everything before the phase, before its meter started. */
  projectionsAtStart?: CatchUp;
  /** The direct baseline of the same phase, run just before this one (buffered open loop, unless --unpaired). */
  baseline?: LoadResult;
  /** The machine's 1-minute load average when the phase started: how shared the machine was. */
  loadAverage?: number;
}

export interface SlowStreamsReport {
  settings: { streams: number; deployments: number; chunks: number; chunkGapMs: number; rampMs: number };
  load: SlowStreamsResult;
  /** The target's RSS just before the streams were opened (after the other phases). */
  rssBeforeMb: number | null;
  /** The target's RSS when all streams were open at once (null if that moment never came). */
  rssAtPlateauMb: number | null;
  rssPeakMb: number | null;
  cpu: PhaseCpu;
}
