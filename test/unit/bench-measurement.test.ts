import { type Sample, summarizeLoad } from '../../bench/load/sample.js';
import { CpuAccount } from '../../bench/measure/cpu-account.js';
import { parseRssKb, parseStat, processTree, readMainThreadStat, readStat } from '../../bench/measure/proc.js';
import { parseCpuPressure, parseCpuTimes, stealShare } from '../../bench/measure/machine-contention.js';
import { distribution, percentile } from '../../bench/measure/summary.js';
import { footprint } from '../../bench/targets/target.js';
import { bufferedContent, sseContent } from '../../bench/targets/verify.js';

describe('percentiles (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('returns a value a request really had, never an interpolation', () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 99.9)).toBe(100);
    expect(percentile(hundred, 0)).toBe(1);
    expect(percentile([1, 10], 50)).toBe(1);
    expect(percentile([1, 10], 51)).toBe(10);
  });

  it('has no percentile of nothing', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(distribution([])).toBeNull();
  });

  it('sorts its input numerically, not as text', () => {
    const d = distribution([10, 9, 100, 2, 1.5])!;
    expect(d).toMatchObject({ count: 5, p50: 9, max: 100 });
    expect(d.mean).toBeCloseTo(24.5, 3);
  });
});

describe('phase summaries', () => {
  const at = (due: number, issuedAt: number, sentAt: number, firstByteAt: number, endAt: number, outcome = 'ok'): Sample => ({ due, issuedAt, sentAt, firstByteAt, endAt, outcome });

  it('counts latency from the due time, so a stalled target cannot hide behind a late generator', () => {
    const samples = [
      at(0, 0, 0.1, 1, 2),
      at(10, 25, 25.1, 26, 27), // the generator was 15 ms late: the 17 ms count
    ];
    const result = summarizeLoad(samples, { loop: 'open', level: 100, mode: 'sse', windowStart: 0, windowEnd: 20, lateMs: 2 });
    expect(result.latency).toMatchObject({ count: 2, p50: 2, max: 17 });
    expect(result.ttfb).toMatchObject({ p50: 1, max: 16 });
    expect(result.late).toBe(1);
    expect(result.issueLag?.max).toBe(15);
  });

  it('keeps errors, unsent requests and responses after the window out of latency and throughput', () => {
    const samples = [
      at(0, 0, 0.2, 1, 5),
      at(100, 100, 100.2, 101, 900), // ends after the 1 s window: counted in latency, not in throughput
      { ...at(200, 200, 200.1, NaN, 210, 'http-503'), errorBody: '{"error":{"code":"overloaded"}}' },
      at(300, 300, NaN, NaN, 11_000, 'drain-timeout'),
      at(400, 400, 400.1, 401, 420, 'incomplete-stream'),
    ];
    const result = summarizeLoad(samples, { loop: 'open', level: 5, mode: 'sse', windowStart: 0, windowEnd: 1000, lateMs: 2 });
    expect(result.issued).toBe(5);
    expect(result.ok).toBe(2);
    expect(result.errors).toEqual({ 'http-503': 1, 'drain-timeout': 1, 'incomplete-stream': 1 });
    expect(result.errorSamples).toEqual({ 'http-503': '{"error":{"code":"overloaded"}}' });
    expect(result.unsent).toBe(1);
    expect(result.throughputRps).toBe(2);
    expect(result.latency?.count).toBe(2);
    expect(result.sendLag?.count).toBe(4);
  });

  it('never calls a closed-loop request late: nothing was scheduled', () => {
    const result = summarizeLoad([at(0, 5, 5, 6, 7)], { loop: 'closed', level: 1, mode: 'buffered', windowStart: 0, windowEnd: 10, lateMs: null });
    expect(result.late).toBe(0);
    expect(result.lateMs).toBeNull();
  });
});

describe('/proc parsing', () => {
  // Field 2 may contain spaces and parentheses; utime (14) = 1500, stime (15) = 250, starttime (22) = 987654.
  const line = '4242 (node (worker) 2) S 4000 4242 4242 0 -1 4194560 5000 0 0 0 1500 250 0 0 20 0 11 0 987654 1100000000 30000 18446744073709551615 1 1 0 0 0 0 0 16781312 17922 0 0 0 17 1 0 0 0 0 0';

  it('counts the fields after the last parenthesis', () => {
    expect(parseStat(line)).toEqual({ pid: 4242, ppid: 4000, cpuTicks: 1750, startTicks: 987654 });
  });

  it('refuses a line that is not a stat line', () => {
    expect(() => parseStat('not a stat line')).toThrow('not a /proc/<pid>/stat line');
  });

  it('reads VmRSS in kB, and 0 for a process without one', () => {
    expect(parseRssKb('Name:\tnode\nVmHWM:\t  200000 kB\nVmRSS:\t  123456 kB\nThreads:\t11\n')).toBe(123456);
    expect(parseRssKb('Name:\tzombie\nState:\tZ (zombie)\n')).toBe(0);
  });

  it('reads this very process, whose CPU only grows', () => {
    const before = readStat(process.pid)!;
    expect(before.pid).toBe(process.pid);
    expect(before.ppid).toBe(process.ppid);
    const start = process.cpuUsage();
    let x = 0;
    while (process.cpuUsage(start).user < 200_000) x += Math.sqrt(x + 1);
    expect(x).toBeGreaterThan(0);
    // 200 ms of user time is 20 ticks at 100 Hz; the kernel's own accounting must show most of it.
    expect(readStat(process.pid)!.cpuTicks - before.cpuTicks).toBeGreaterThanOrEqual(10);
    expect(processTree(process.pid)[0]).toBe(process.pid);
    expect(readStat(2 ** 22 + 1)).toBeNull();
  });

  it('reads the main thread alone: what it spends counts there, what a worker thread spends only in the process', async () => {
    const { Worker } = await import('node:worker_threads');
    const thread = () => readMainThreadStat(process.pid)!.cpuTicks;
    const whole = () => readStat(process.pid)!.cpuTicks;
    const [threadBefore, wholeBefore] = [thread(), whole()];
    // 300 ms of CPU on a worker while this thread waits for it.
    const worker = new Worker('const start = process.cpuUsage(); let x = 0; while (process.cpuUsage(start).user < 300000) x += Math.sqrt(x + 1);', { eval: true });
    await new Promise((resolve) => worker.once('exit', resolve));
    expect(whole() - wholeBefore).toBeGreaterThanOrEqual(15);
    expect(thread() - threadBefore).toBeLessThan(10);
    expect(readMainThreadStat(2 ** 22 + 1)).toBeNull();
  });
});

describe('what else wanted the CPU (steal, pressure)', () => {
  const stat = (steal: number, idle: number) => `cpu  1000 10 300 ${idle} 20 0 5 ${steal} 40 0\ncpu0 500 5 150 ${idle / 2} 10 0 2 ${steal / 2} 20 0\nintr 1\n`;

  it('sums the first eight fields of the cpu line (guest time is already in user) and reads steal as the eighth', () => {
    expect(parseCpuTimes(stat(100, 8000))).toEqual({ steal: 100, total: 1000 + 10 + 300 + 8000 + 20 + 0 + 5 + 100 });
    expect(parseCpuTimes('intr 1\n')).toBeNull();
    expect(parseCpuTimes('cpu  1 2 3\n')).toBeNull();
  });

  it('gives steal as a share of the CPU time between two readings', () => {
    const start = parseCpuTimes(stat(100, 8000));
    const end = parseCpuTimes(stat(300, 9800));
    expect(stealShare(start, end)).toBeCloseTo(200 / 2000, 10);
    expect(stealShare(start, start)).toBeNull();
    expect(stealShare(null, end)).toBeNull();
  });

  it('reads some avg60 of /proc/pressure/cpu as a share, and nothing from a text without it', () => {
    expect(parseCpuPressure('some avg10=17.29 avg60=21.20 avg300=18.40 total=211389999\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n')).toBeCloseTo(0.212, 10);
    expect(parseCpuPressure('')).toBeNull();
  });
});

describe('CPU accounting over a changing set of processes', () => {
  const reading = (pid: number, cpuTicks: number, startTicks = 0) => ({ pid, ppid: 1, cpuTicks, startTicks });

  it('counts each process from its reading at the phase start', () => {
    const account = new CpuAccount(10_000);
    account.observe([reading(1, 500), reading(2, 40)]);
    account.observe([reading(1, 560), reading(2, 45)]);
    expect(account.ticks()).toBe(65);
    expect(account.processes()).toBe(2);
  });

  it('counts a process born during the phase from zero, and one first seen late from that reading', () => {
    const account = new CpuAccount(10_000);
    account.observe([reading(1, 500)]);
    account.observe([reading(1, 500), reading(3, 30, 10_050), reading(4, 900, 50)]);
    account.observe([reading(3, 70, 10_050), reading(4, 910, 50)]);
    expect(account.ticks()).toBe(70 + 10);
  });

  it('keeps what a process used before it exited', () => {
    const account = new CpuAccount(10_000);
    account.observe([reading(1, 100), reading(2, 100)]);
    account.observe([reading(1, 150), reading(2, 120)]);
    account.observe([reading(1, 170)]); // 2 is gone
    expect(account.ticks()).toBe(70 + 20);
  });
});

describe('answer verification', () => {
  it('reads the buffered content and joins SSE deltas', () => {
    expect(bufferedContent('{"choices":[{"message":{"role":"assistant","content":"Hello there"}}]}')).toBe('Hello there');
    const stream = 'data: {"choices":[{"delta":{"role":"assistant"}}]}\n\ndata: {"choices":[{"delta":{"content":"Hello"}}]}\n\n' +
      'data: {"choices":[{"delta":{"content":" there"}}]}\n\ndata: [DONE]\n\n';
    expect(sseContent(stream)).toBe('Hello there');
  });

  it('refuses a stream without its terminator', () => {
    expect(() => sseContent('data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n')).toThrow('[DONE]');
  });
});

describe('a target\'s memory footprint', () => {
  it('counts a -px variant\'s projector with its gateway, as the phase meter\'s peak does', () => {
    expect(footprint({ processes: () => [101, 102], projectorProcesses: () => [201] })).toEqual([101, 102, 201]);
  });

  it('is the target\'s own processes when it has no projector', () => {
    expect(footprint({ processes: () => [101] })).toEqual([101]);
    expect(footprint({ processes: () => [], projectorProcesses: () => [] })).toEqual([]);
  });
});
