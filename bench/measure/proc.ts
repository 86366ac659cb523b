import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/** What the runner needs from /proc/<pid>/stat (proc(5)). */
export interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime, in clock ticks: CPU the process has used so far, all its threads together. */
  cpuTicks: number;
  /** When the process started, in clock ticks since boot. */
  startTicks: number;
}

/**
 * Parses one stat line. The command name (field 2) is in parentheses and may itself contain spaces and
 * parentheses, so the fields are counted from the last ')'.
 */
export function parseStat(text: string): ProcStat {
  const close = text.lastIndexOf(')');
  if (close < 0) throw new Error('not a /proc/<pid>/stat line');
  const pid = Number(text.slice(0, text.indexOf('(')).trim());
  // After ") " the fields are numbered from 3 (state); utime is field 14, stime 15, starttime 22.
  const fields = text.slice(close + 2).trim().split(/\s+/);
  const field = (n: number) => Number(fields[n - 3]);
  return { pid, ppid: field(4), cpuTicks: field(14) + field(15), startTicks: field(22) };
}

/** Resident set size in kB from a /proc/<pid>/status text (0 when absent: a zombie has none). */
export function parseRssKb(status: string): number {
  return Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? 0);
}

export function readStat(pid: number): ProcStat | null {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null; // the process has exited
  }
}

/**
 * The process's main thread alone (`/proc/<pid>/task/<pid>/stat`, the same fields): a Node server's event loop —
 * the thread every request waits for — without its worker threads (the embedded engine's, the relay's) and V8's.
 */
export function readMainThreadStat(pid: number): ProcStat | null {
  try {
    return parseStat(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

export function readRssKb(pid: number): number {
  try {
    return parseRssKb(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return 0;
  }
}

/** The process and all its descendants (a gateway started with workers is a tree). */
export function processTree(root: number): number[] {
  const out: number[] = [];
  const visit = (pid: number) => {
    out.push(pid);
    for (const child of childrenOf(pid)) visit(child);
  };
  if (readStat(root)) visit(root);
  return out;
}

function childrenOf(pid: number): number[] {
  const children: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const list = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (list) children.push(...list.split(/\s+/).map(Number));
    }
    return children;
  } catch {
    // Kernels without CONFIG_PROC_CHILDREN: scan every process for its parent.
    return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number).filter((candidate) => readStat(candidate)?.ppid === pid);
  }
}

/** Now, in clock ticks since boot (the unit of `startTicks`). */
export function uptimeTicks(ticksPerSecond: number): number {
  return Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * ticksPerSecond;
}

/** USER_HZ; 100 on every common Linux build, asked of getconf in case this one differs. */
export function clockTicksPerSecond(): number {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return value > 0 ? value : 100;
  } catch {
    return 100;
  }
}
