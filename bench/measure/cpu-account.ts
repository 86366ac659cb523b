import type { ProcStat } from './proc.js';

/**
 * CPU used by a changing set of processes over one phase: each process counts from its reading at the
 * phase start, or from zero when it was born during the phase; one that exits keeps its last reading.
 * Pure bookkeeping over readings, so it is tested without real processes.
 */
export class CpuAccount {
  private readonly base = new Map<number, number>();
  private readonly latest = new Map<number, number>();

  /** @param phaseStartTicks the phase start in clock ticks since boot (compared with `startTicks`). */
  constructor(private readonly phaseStartTicks: number) {}

  observe(readings: Iterable<ProcStat>): void {
    for (const reading of readings) {
      if (!this.base.has(reading.pid)) this.base.set(reading.pid, reading.startTicks >= this.phaseStartTicks ? 0 : reading.cpuTicks);
      this.latest.set(reading.pid, Math.max(reading.cpuTicks, this.latest.get(reading.pid) ?? 0));
    }
  }

  /** Ticks used since the phase start by every process observed. */
  ticks(): number {
    let sum = 0;
    for (const [pid, latest] of this.latest) sum += latest - (this.base.get(pid) ?? latest);
    return sum;
  }

  processes(): number {
    return this.latest.size;
  }
}
