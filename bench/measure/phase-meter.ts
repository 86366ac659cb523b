import { CpuAccount } from './cpu-account.js';
import type { PostgresBackends } from './postgres-backends.js';
import type { CatchUp, ProjectionLag } from './projection-lag.js';
import { type ProcStat, readMainThreadStat, readRssKb, readStat, uptimeTicks } from './proc.js';
import { round3 } from './summary.js';

export interface MeteredProcesses {
  target: () => number[];
  /** `switchyard projector` processes next to the target (-px variants; none otherwise). */
  projector: () => number[];
  /** A -relay variant's broker on this machine (none otherwise). */
  broker: () => number[];
  postgres: PostgresBackends | null;
  /** Where the target's durable projections stand against its log (PostgreSQL variants). */
  projections: ProjectionLag | null;
  mock: number;
  generator: number;
}

export interface PhaseCpu {
  /** CPU ms of the target's processes over the load and its settling (see `settleMs`). */
  targetMs: number;
  targetProcesses: number;
  /** CPU ms of the main threads of the target's processes (their event loops), a part of `targetMs`. */
  servingThreadMs: number;
  /** CPU ms of the target's `switchyard projector` processes (null: the projections run in the target). */
  projectorMs: number | null;
  projectorProcesses: number | null;
  /** CPU ms of a -relay variant's broker on this machine (null: no relay, or its broker runs elsewhere). */
  brokerMs: number | null;
  /** The durable projections catching up after the load (null: not measured, the embedded store). */
  projections: CatchUp | null;
  /** CPU ms of the PostgreSQL backends of the target's own database (null: no database or not local). */
  postgresMs: number | null;
  postgresBackends: number | null;
  /** CPU ms of the server-wide PostgreSQL processes: shared with every other database on the server. */
  postgresBackgroundMs: number | null;
  mockMs: number;
  generatorMs: number;
  /** Wall time of the load, and the share of one core the mock and the generator used during it. */
  loadMs: number;
  mockCoreShare: number;
  generatorCoreShare: number;
  /** How long after the load the target (and its PostgreSQL backends) kept working: projections, flushes. */
  settleMs: number;
  /** Largest sum of the target's (and its projector's) resident memory seen during the phase. */
  rssPeakMb: number | null;
}

const SAMPLE_MS = 250;
/** Idle: at most one clock tick of target + PostgreSQL CPU per sample, twice in a row. */
const IDLE_TICKS = 1;
const MAX_SETTLE_MS = 10_000;
/** How long the meter waits for the durable projections to apply the phase's events. */
export const MAX_CATCH_UP_MS = 60_000;

/**
 * Accounts CPU (utime+stime from /proc/<pid>/stat) and RSS of everything a phase runs on. The target and
 * its PostgreSQL backends are read every 250 ms so processes born or gone during the phase are counted;
 * after the load the meter waits until the durable projections have applied every event (wherever they
 * run) and then until everything is idle, so deferred work (projections catching up, the last group
 * commit) is charged to the requests that caused it.
 */
export class PhaseMeter {
  private readonly target: CpuAccount;
  private readonly servingThread: CpuAccount;
  private readonly projector: CpuAccount;
  private readonly broker: CpuAccount;
  private readonly postgres: CpuAccount;
  private readonly background: CpuAccount;
  private readonly mock: CpuAccount;
  private readonly generator: CpuAccount;
  private readonly started = performance.now();
  private loadEnded = NaN;
  private rssPeakKb = 0;
  private catchUp: CatchUp | null = null;
  private timer: NodeJS.Timeout | null = null;
  private sampling: Promise<number> = Promise.resolve(0);

  private constructor(
    private readonly processes: MeteredProcesses,
    private readonly ticksPerSecond: number,
  ) {
    const now = uptimeTicks(ticksPerSecond);
    this.target = new CpuAccount(now);
    this.servingThread = new CpuAccount(now);
    this.projector = new CpuAccount(now);
    this.broker = new CpuAccount(now);
    this.postgres = new CpuAccount(now);
    this.background = new CpuAccount(now);
    this.mock = new CpuAccount(now);
    this.generator = new CpuAccount(now);
  }

  static async start(processes: MeteredProcesses, ticksPerSecond: number): Promise<PhaseMeter> {
    const meter = new PhaseMeter(processes, ticksPerSecond);
    await meter.sample(true);
    meter.timer = setInterval(() => (meter.sampling = meter.sampling.then(() => meter.sample(false))), SAMPLE_MS);
    return meter;
  }

  /**
   * The load ended: reads the helpers (they are idle from now on), waits for the durable projections to
   * apply the phase's events, then for the target to settle.
   */
  async endLoad(): Promise<void> {
    this.loadEnded = performance.now();
    await this.sampling;
    this.observeHelpers();
    if (this.processes.projections) this.catchUp = await this.processes.projections.waitCaughtUp(MAX_CATCH_UP_MS);
    const deadline = performance.now() + MAX_SETTLE_MS;
    let quiet = 0;
    while (quiet < 2 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
      quiet = (await this.sample(false)) <= IDLE_TICKS ? quiet + 1 : 0;
    }
  }

  async finish(): Promise<PhaseCpu> {
    if (this.timer) clearInterval(this.timer);
    await this.sampling;
    await this.sample(false);
    const settled = performance.now();
    const ms = (ticks: number) => round3((ticks * 1000) / this.ticksPerSecond);
    const loadMs = this.loadEnded - this.started;
    const mock = ms(this.mock.ticks());
    const generator = ms(this.generator.ticks());
    const hasPostgres = this.processes.postgres?.local ?? false;
    const hasProjector = this.projector.processes() > 0;
    return {
      targetMs: ms(this.target.ticks()),
      targetProcesses: this.target.processes(),
      servingThreadMs: ms(this.servingThread.ticks()),
      projectorMs: hasProjector ? ms(this.projector.ticks()) : null,
      projectorProcesses: hasProjector ? this.projector.processes() : null,
      brokerMs: this.broker.processes() > 0 ? ms(this.broker.ticks()) : null,
      projections: this.catchUp,
      postgresMs: hasPostgres ? ms(this.postgres.ticks()) : null,
      postgresBackends: hasPostgres ? this.postgres.processes() : null,
      postgresBackgroundMs: hasPostgres ? ms(this.background.ticks()) : null,
      mockMs: mock,
      generatorMs: generator,
      loadMs: round3(loadMs),
      mockCoreShare: round3(mock / loadMs),
      generatorCoreShare: round3(generator / loadMs),
      settleMs: Math.round(settled - this.loadEnded),
      rssPeakMb: this.rssPeakKb > 0 ? Math.round(this.rssPeakKb / 1024) : null,
    };
  }

  private observeHelpers(): void {
    this.mock.observe(reads([this.processes.mock]));
    this.generator.observe(reads([this.processes.generator]));
  }

  /** One reading of everything; returns the target + projector + PostgreSQL ticks since the previous one. */
  private async sample(first: boolean): Promise<number> {
    const working = () => this.target.ticks() + this.projector.ticks() + this.postgres.ticks();
    const before = working();
    const pids = this.processes.target();
    const projector = this.processes.projector();
    this.target.observe(reads(pids));
    this.servingThread.observe(pids.map(readMainThreadStat).filter((stat): stat is ProcStat => stat !== null));
    this.projector.observe(reads(projector));
    this.broker.observe(reads(this.processes.broker()));
    let rss = 0;
    for (const pid of [...pids, ...projector]) rss += readRssKb(pid);
    this.rssPeakKb = Math.max(this.rssPeakKb, rss);
    const postgres = this.processes.postgres;
    if (postgres?.local) {
      this.postgres.observe(reads(await postgres.backendPids()));
      this.background.observe(reads(await postgres.backgroundPids()));
    }
    if (first) this.observeHelpers();
    return working() - before;
  }
}

function reads(pids: number[]): ProcStat[] {
  return pids.map(readStat).filter((stat): stat is ProcStat => stat !== null);
}
