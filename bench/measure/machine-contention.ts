import { readFileSync } from 'node:fs';

/**
 * What else wanted this machine's CPU during a run: on a VM, the time its host gave to other guests
 * (steal) and the share of time some runnable task waited for a CPU (pressure stall information). A run
 * with either high measures the machine more than the targets; the report says so next to the ratios.
 */
export interface CpuTimes {
  /** Jiffies the host took for others while this guest wanted to run. */
  steal: number;
  /** All jiffies of all CPUs. */
  total: number;
}

/** The aggregate `cpu` line of a /proc/stat text (proc(5)): user nice system idle iowait irq softirq steal … */
export function parseCpuTimes(stat: string): CpuTimes | null {
  const line = /^cpu\s+(.*)$/m.exec(stat)?.[1];
  if (!line) return null;
  const fields = line.trim().split(/\s+/).map(Number);
  if (fields.length < 8 || fields.some((n) => !Number.isFinite(n))) return null;
  // guest and guest_nice (fields 9 and 10) are already counted in user and nice.
  const total = fields.slice(0, 8).reduce((sum, n) => sum + n, 0);
  return { steal: fields[7], total };
}

/** Steal as a share of all CPU time between two readings; null without both or without time between them. */
export function stealShare(start: CpuTimes | null, end: CpuTimes | null): number | null {
  if (!start || !end || end.total <= start.total) return null;
  return (end.steal - start.steal) / (end.total - start.total);
}

/** The `some avg60` of a /proc/pressure/cpu text, as a share (0.18 for 18%). */
export function parseCpuPressure(text: string): number | null {
  const avg60 = /^some\b.*\bavg60=([\d.]+)/m.exec(text)?.[1];
  return avg60 === undefined ? null : Number(avg60) / 100;
}

export function readCpuTimes(): CpuTimes | null {
  return readOr('/proc/stat', parseCpuTimes);
}

export function readCpuPressure(): number | null {
  return readOr('/proc/pressure/cpu', parseCpuPressure);
}

function readOr<T>(path: string, parse: (text: string) => T | null): T | null {
  try {
    return parse(readFileSync(path, 'utf8'));
  } catch {
    return null; // not Linux, or a kernel without PSI
  }
}
