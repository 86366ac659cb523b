import type { LoadResult } from '../../bench/load/sample.js';
import { listensOn, localNatsServerPids } from '../../bench/measure/local-broker.js';
import type { PhaseCpu } from '../../bench/measure/phase-meter.js';
import { OptionError, estimatedSeconds, parsePhase, parsePlan, parseVariant } from '../../bench/options.js';
import type { BenchReport, PhaseReport, TargetReport } from '../../bench/report/bench-report.js';
import { Comparison } from '../../bench/report/comparison.js';
import { renderMarkdown } from '../../bench/report/markdown.js';
import { benchConfig } from '../../bench/targets/switchyard.js';
import { parseGatewayConfig } from '../../src/config/gateway-config.js';

function load(id: string, rps: number, p50: number, p99: number, ttfbP50 = p50): LoadResult {
  const [mode, loop, level] = id.split(':');
  const dist = (a: number, b: number) => ({ count: 100, mean: a, p50: a, p90: b, p95: b, p99: b, p999: b, max: b });
  return {
    loop: loop as 'open', level: Number(level), mode: mode as 'sse', windowMs: 1000, issued: rps, ok: rps, errors: {}, errorSamples: {}, throughputRps: rps,
    latency: dist(p50, p99), ttfb: dist(ttfbP50, ttfbP50), issueLag: null, sendLag: null, late: 0, lateMs: 2, unsent: 0,
  };
}

const cpu: PhaseCpu = {
  targetMs: 0, targetProcesses: 1, servingThreadMs: 0, projectorMs: null, projectorProcesses: null, brokerMs: null, projections: null, postgresMs: null, postgresBackends: null, postgresBackgroundMs: null, mockMs: 0, generatorMs: 0,
  loadMs: 1000, mockCoreShare: 0.2, generatorCoreShare: 0.3, settleMs: 500, rssPeakMb: 150,
};

function phase(id: string, l: LoadResult, perRequest: PhaseReport['perRequest'] = { targetCpuMs: null, postgresCpuMs: null, totalCpuMs: null }): PhaseReport {
  return { id, mode: l.mode, loop: l.loop, level: l.level, load: l, cpu, upstreamCalls: l.ok, perRequest };
}

function target(id: string, kind: TargetReport['kind'], phases: PhaseReport[], extra: Partial<TargetReport> = {}): TargetReport {
  return { id, kind, phases, ...extra };
}

const plan = parsePlan(['--phases', 'buffered:closed:32,buffered:open:300,sse:closed:1'], {});
const report: BenchReport = {
  at: '2026-12-01T00:00:00.000Z',
  machine: { cpus: 2, cpuModel: 'test cpu', memoryMb: 1, kernel: 'k', node: 'v20', postgres: null, loadAverageStart: [1, 1, 1], loadAverageEnd: [1, 1, 1], clockTicksPerSecond: 100 },
  plan,
  method: {},
  durationS: 60,
  targets: [
    target('direct', 'direct', [phase('buffered:closed:32', load('buffered:closed:32', 20_000, 1, 3)), phase('buffered:open:300', load('buffered:open:300', 300, 0.5, 2)), phase('sse:closed:1', load('sse:closed:1', 4000, 0.3, 0.5, 0.2))]),
    target('bare', 'bare', [phase('buffered:closed:32', load('buffered:closed:32', 10_000, 3, 6)), phase('buffered:open:300', load('buffered:open:300', 300, 0.9, 3)), phase('sse:closed:1', load('sse:closed:1', 2000, 0.5, 0.9, 0.4))]),
    target('portkey', 'portkey', [phase('buffered:closed:32', load('buffered:closed:32', 500, 60, 400)), phase('buffered:open:300', load('buffered:open:300', 300, 2, 30))], { details: { version: '1.15.2' } }),
    target('switchyard:pg-default', 'switchyard', [
      phase('buffered:closed:32', load('buffered:closed:32', 4000, 8, 20), { targetCpuMs: 0.1, postgresCpuMs: 0.04, totalCpuMs: 0.14 }),
      phase('buffered:open:300', load('buffered:open:300', 300, 1.3, 6)),
      phase('sse:closed:1', load('sse:closed:1', 1000, 1, 2, 0.8)),
    ]),
    target('switchyard:pg-async', 'switchyard', [phase('buffered:closed:32', load('buffered:closed:32', 6000, 5, 12), { targetCpuMs: 0.15, postgresCpuMs: 0.05, totalCpuMs: 0.2 })]),
    target('switchyard:pg-default-w2', 'switchyard', [], { skipped: 'the gateway ignored SWITCHYARD_WORKERS=2 (it ran as one process)' }),
  ],
};

describe('comparison of targets', () => {
  const comparison = new Comparison(report);

  it('divides throughput by the bare proxy and by Portkey in the same phase', () => {
    expect(comparison.throughputRatio('switchyard:pg-default', 'bare', 'buffered:closed:32')).toBe(0.4);
    expect(comparison.throughputRatio('switchyard:pg-default', 'portkey', 'buffered:closed:32')).toBe(8);
    expect(comparison.throughputRatio('switchyard:pg-default', 'portkey', 'sse:closed:1')).toBeNull(); // Portkey has no SSE run
  });

  it('measures added latency against the direct baseline and SSE TTFB against the bare proxy', () => {
    expect(comparison.addedLatency('switchyard:pg-default', 'buffered:open:300', 'p50')).toBe(0.8);
    expect(comparison.addedLatency('switchyard:pg-default', 'buffered:open:300', 'p99')).toBe(4);
    expect(comparison.ttfbOverBare('switchyard:pg-default', 'sse:closed:1')).toBe(0.4);
    expect(comparison.addedLatency('switchyard:pg-async', 'buffered:open:300', 'p50')).toBeNull();
  });

  it('prefers the direct baseline paired with the phase over the one from the start of the run', () => {
    const paired = structuredClone(report);
    paired.targets.find((t) => t.id === 'switchyard:pg-default')!.phases[1].baseline = load('buffered:open:300', 300, 0.7, 2.5);
    expect(new Comparison(paired).addedLatency('switchyard:pg-default', 'buffered:open:300', 'p50')).toBe(0.6);
    expect(new Comparison(paired).addedLatency('switchyard:pg-default', 'buffered:open:300', 'p99')).toBe(3.5);
  });

  it('checks each goal against its variant, and says when a goal could not be measured', () => {
    const goals = comparison.goals();
    const of = (variant: string, text: string) => goals.find((g) => g.variant === variant && g.goal.includes(text));
    expect(of('pg-default', '5× Portkey')).toMatchObject({ measured: '8×', met: true });
    expect(of('pg-default', '0.35× bare')).toMatchObject({ measured: '0.4×', met: true });
    expect(of('pg-default', 'P50 at 300 rps ≤ 1 ms')).toMatchObject({ measured: '0.8 ms', met: true });
    expect(of('pg-default', 'CPU per request')).toMatchObject({ measured: '0.14 ms', met: true });
    expect(of('pg-async', '0.5× bare')).toMatchObject({ measured: '0.6×', met: true });
    expect(of('pg-async', 'CPU per request')).toMatchObject({ measured: '0.2 ms', met: false });
    expect(of('pg-async', 'P50 at 300 rps ≤ 0.3 ms')).toMatchObject({ measured: null, met: null });
    expect(goals.some((g) => g.variant === 'pg-default-w2')).toBe(false);
  });

  it('does not count an added latency below zero as a goal met: the baseline was the slower one', () => {
    const stalled = structuredClone(report);
    stalled.targets.find((t) => t.id === 'switchyard:pg-default')!.phases[1].baseline = load('buffered:open:300', 300, 0.7, 60);
    const goals = new Comparison(stalled).goals();
    const of = (text: string) => goals.find((g) => g.variant === 'pg-default' && g.goal.includes(text));
    expect(of('P99 at 300 rps')).toEqual({ variant: 'pg-default', goal: 'added P99 at 300 rps ≤ 5 ms', measured: '-54 ms (the direct baseline was slower: noise, not judged)', met: null });
    expect(of('P50 at 300 rps')).toMatchObject({ measured: '0.6 ms', met: true });
    expect(renderMarkdown(stalled)).toContain('| pg-default | added P99 at 300 rps ≤ 5 ms | -54 ms (the direct baseline was slower: noise, not judged) | – |');
  });

  it('renders tables docs/benchmarks.md can include, naming skipped variants', () => {
    const markdown = renderMarkdown(report);
    expect(markdown).toContain('| Switchyard pg-default | 4,000 | 0.40× | 8.00× | 0 |');
    expect(markdown).toContain('| Switchyard pg-default | +0.80 / +4.00 | 0 | 0 |');
    expect(markdown).toContain('| Portkey 1.15.2 |');
    expect(markdown).toContain('0.800 (+0.40) / 1.00');
    expect(markdown).toContain('switchyard:pg-default-w2: skipped, the gateway ignored SWITCHYARD_WORKERS=2');
    expect(markdown).toMatch(/\| pg-async \| c=32 buffered throughput ≥ 0\.5× bare proxy \(async\) \| 0\.6× \| yes \|/);
    expect(markdown).not.toContain('late (P99');
  });

  it('shows a -px variant\'s projector CPU in a column of its own, added into the total, and says when it lagged', () => {
    const withProjector = structuredClone(report);
    const px = structuredClone(withProjector.targets.find((t) => t.id === 'switchyard:pg-default')!);
    px.id = 'switchyard:pg-default-px';
    px.phases[0].perRequest = { targetCpuMs: 0.08, projectorCpuMs: 0.03, postgresCpuMs: 0.04, totalCpuMs: 0.15 };
    px.phases[0].cpu = { ...px.phases[0].cpu, projectorMs: 120, projectorProcesses: 1, projections: { behindAtStart: 900, caughtUpMs: null, behindAtEnd: 40 } };
    withProjector.targets.push(px);
    const markdown = renderMarkdown(withProjector);
    expect(markdown).toContain('| target | c=32 gateway | c=32 projector | c=32 PostgreSQL | c=32 total |');
    expect(markdown).toContain('| Switchyard pg-default-px | 0.080 | 0.030 | 0.040 | 0.150 |');
    expect(markdown).toContain('| Switchyard pg-default | 0.100 | – | 0.040 | 0.140 |');
    expect(markdown).toContain('CPU per request at c=32 (gateway + projector + PostgreSQL) ≤ 0.15 ms');
    expect(markdown).toContain('switchyard:pg-default-px buffered:closed:32: the durable projections were still 40 events behind');
    expect(renderMarkdown(report)).not.toContain('projector');
  });

  // Optional columns beside the gateway's: each appears only when some row has it, and stays out of the total.
  it.each([
    {
      column: "a -relay variant's broker on this machine",
      id: 'switchyard:pg-default-relay',
      perRequest: { targetCpuMs: 0.11, projectorCpuMs: null, brokerCpuMs: 0.05, postgresCpuMs: 0.04, totalCpuMs: 0.15 },
      header: '| target | c=32 gateway | c=32 PostgreSQL | c=32 total | c=32 broker |',
      row: '| Switchyard pg-default-relay | 0.110 | 0.040 | 0.150 | 0.050 |',
      other: '| Switchyard pg-default | 0.100 | 0.040 | 0.140 | – |',
      note: 'broker = the NATS server a -relay variant publishes to, on this machine, not in the total',
      word: 'broker',
    },
    {
      column: "the gateway's serving thread, a part of the gateway's",
      id: 'switchyard:pg-default-b',
      perRequest: { targetCpuMs: 0.12, servingThreadCpuMs: 0.07, postgresCpuMs: 0.04, totalCpuMs: 0.16 },
      header: '| target | c=32 gateway | c=32 serving thread | c=32 PostgreSQL | c=32 total |',
      row: '| Switchyard pg-default-b | 0.120 | 0.070 | 0.040 | 0.160 |',
      other: '| Switchyard pg-default | 0.100 | – | 0.040 | 0.140 |',
      note: "serving thread = the gateway's main threads (event loops), a part of its column",
      word: 'serving thread',
    },
  ])('shows $column in a column of its own only when measured', ({ id, perRequest, header, row, other, note, word }) => {
    const withColumn = structuredClone(report);
    const target = structuredClone(withColumn.targets.find((t) => t.id === 'switchyard:pg-default')!);
    target.id = id;
    target.phases[0].perRequest = perRequest;
    withColumn.targets.push(target);
    const markdown = renderMarkdown(withColumn);
    expect(markdown).toContain(header);
    expect(markdown).toContain(row);
    expect(markdown).toContain(other);
    expect(markdown).toContain(note);
    expect(renderMarkdown(report)).not.toContain(word);
  });

  it('finds a local NATS server by the port on its command line', () => {
    expect(listensOn(['/usr/sbin/nats-server', '-a', '127.0.0.1', '-p', '4222', '-js'], '4222')).toBe(true);
    expect(listensOn(['nats-server', '-js', '--port=4223'], '4222')).toBe(false);
    expect(listensOn(['nats-server', '-js', '--port', '4223'], '4223')).toBe(true);
    expect(listensOn(['nats-server', '-js'], '4222')).toBe(true);
    expect(listensOn(['nats-server', '-js'], '4223')).toBe(false);
    expect(localNatsServerPids('nats://broker.example:4222')).toEqual([]);
    expect(localNatsServerPids('amqp://127.0.0.1:5672')).toEqual([]);
  });

  it('names the host\'s steal and the CPU pressure in the header when the kernel gave them, and nothing otherwise', () => {
    const contended = { ...report, machine: { ...report.machine, stealShare: 0.025, cpuPressureStart: 0.172, cpuPressureEnd: 0.21 } };
    expect(renderMarkdown(contended).split('\n')[0]).toContain('· steal 2.5% · CPU pressure (some, avg60) 17.2% at start, 21.0% at the end');
    expect(renderMarkdown(report).split('\n')[0]).not.toMatch(/steal|pressure/);
  });

  it('says when the generator could not hold an open-loop rate', () => {
    const starved = structuredClone(report);
    const open = starved.targets.find((t) => t.id === 'bare')!.phases[1].load;
    Object.assign(open, { issued: 300, late: 60, issueLag: { ...open.latency!, p99: 240 } });
    expect(renderMarkdown(starved)).toContain('bare buffered:open:300: 20% of the requests were sent more than 2 ms late (P99 240 ms)');
  });
});

describe('bench options', () => {
  it('the quick preset stays on the embedded store without DATABASE_URL, and adds PostgreSQL with it', () => {
    expect(parsePlan([], {}).variants.map((v) => v.name)).toEqual(['pglite-default']);
    const withDb = parsePlan([], { DATABASE_URL: 'postgres://x/y' });
    expect(withDb.variants.map((v) => v.name)).toEqual(['pglite-default', 'pg-default']);
    expect(withDb.phases.map((p) => p.id)).toEqual(['buffered:closed:32', 'buffered:open:300', 'sse:closed:1']);
    expect(estimatedSeconds(withDb)).toBeLessThan(120); // "about a minute or two", not the full matrix
    expect(estimatedSeconds(parsePlan(['--preset', 'full'], { DATABASE_URL: 'postgres://x/y' }))).toBeGreaterThan(600);
  });

  it('the full preset crosses every load with both modes and runs the slow streams', () => {
    const full = parsePlan(['--preset', 'full'], { DATABASE_URL: 'postgres://x/y' });
    expect(full.phases).toHaveLength(12);
    expect(full.phases.map((p) => p.id)).toContain('sse:open:3000');
    expect(full.slowStreams?.streams).toBe(1000);
    expect(full.variants.find((v) => v.name === 'pg-default-w2')?.workers).toBe(2);
  });

  it('parses variants and phases, and refuses what it cannot run', () => {
    expect(parseVariant('pg-async-w4')).toEqual({ name: 'pg-async-w4', store: 'postgres', durability: 'async', workers: 4, projector: 'embedded', contentPolicy: false, relay: false });
    expect(parseVariant('pg-default-px')).toEqual({ name: 'pg-default-px', store: 'postgres', durability: 'default', workers: null, projector: 'external', contentPolicy: false, relay: false });
    expect(parseVariant('pglite-default-pii')).toMatchObject({ store: 'pglite', durability: 'default', contentPolicy: true });
    expect(parseVariant('pg-default-w2-px-pii')).toMatchObject({ workers: 2, projector: 'external', contentPolicy: true });
    expect(() => parseVariant('pglite-pii-default')).toThrow('[-px][-pii][-relay]');
    expect(parseVariant('pglite-default-relay')).toMatchObject({ contentPolicy: false, relay: true });
    expect(parseVariant('pglite-default-pii-relay')).toMatchObject({ contentPolicy: true, relay: true });
    expect(parseVariant('pg-default-w2-px')).toMatchObject({ workers: 2, projector: 'external' });
    expect(() => parseVariant('pg-default-px-w2')).toThrow('[-w<N>][-px][-pii][-relay]');
    expect(() => parseVariant('pglite-default-px')).toThrow('a separate projector needs PostgreSQL');
    expect(parseVariant('pglite-strict')).toMatchObject({ store: 'pglite', durability: 'strict', workers: null });
    expect(() => parseVariant('pglite-default-w2')).toThrow('one process by design');
    expect(() => parseVariant('mysql-default')).toThrow(OptionError);
    expect(parsePhase('sse:open:1000')).toEqual({ id: 'sse:open:1000', mode: 'sse', loop: 'open', level: 1000 });
    expect(() => parsePhase('sse:open:0')).toThrow(OptionError);
    expect(() => parsePlan(['--variants', 'pg-default'], {})).toThrow('need DATABASE_URL');
    expect(() => parsePlan(['--phases', 'buffered:closed:1', '--loads', 'open:300'], {})).toThrow('either --phases or --loads');
    expect(() => parsePlan(['--duration', '0'], {})).toThrow('--duration');
    expect(() => parsePlan(['--gateway-env', 'NOEQUALS'], {})).toThrow('KEY=VALUE');
    expect(parsePlan(['--loads', 'closed:1', '--modes', 'sse', '--gateway-env', 'SWITCHYARD_POLL_MS=500'], {})).toMatchObject({
      phases: [{ id: 'sse:closed:1' }],
      gatewayEnv: { SWITCHYARD_POLL_MS: '500' },
    });
  });
});

describe('the Switchyard configuration the bench applies', () => {
  it('is a valid gateway configuration: one alias on the mock, plus a weighted alias for the slow streams', () => {
    const plain = parseGatewayConfig(benchConfig('http://127.0.0.1:9', 0));
    expect(plain.aliases.map((a) => a.name)).toEqual(['bench']);
    expect(plain.deployments).toHaveLength(1);
    const wide = parseGatewayConfig(benchConfig('http://127.0.0.1:9', 8));
    const streams = wide.aliases.find((a) => a.name === 'bench-streams')!;
    expect(streams.strategy).toBe('weighted');
    expect(streams.routes.map((r) => r.deployment)).toEqual(Array.from({ length: 8 }, (_, i) => `bench-stream-${i + 1}`));
    expect(wide.deployments.every((d) => d.provider === 'bench-mock')).toBe(true);
  });
});
