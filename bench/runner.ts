/**
 * Switchyard benchmark: the direct baseline, a bare undici proxy, Portkey's gateway and Switchyard's
 * variants against one zero-latency mock, in one run, each in a process of its own. `npm run bench --
 * --help` lists the options; docs/benchmarks.md says what the figures mean.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { LoadResult, Mode } from './load/sample.js';
import type { SlowStreamsResult } from './load/slow-streams.js';
import { MAX_CATCH_UP_MS, PhaseMeter } from './measure/phase-meter.js';
import { clockTicksPerSecond, readRssKb } from './measure/proc.js';
import { round3 } from './measure/summary.js';
import { type BenchPlan, OptionError, type Phase, USAGE, estimatedSeconds, parsePlan } from './options.js';
import { defaultResultsDir, helperModule } from './paths.js';
import { HelperProcess } from './processes/ipc.js';
import type { BenchReport, MachineInfo, PhaseReport, SlowStreamsReport, TargetReport } from './report/bench-report.js';
import { renderMarkdown } from './report/markdown.js';
import { startBareProxy } from './targets/bare-proxy.js';
import { directTarget } from './targets/direct.js';
import { startPortkey } from './targets/portkey.js';
import { startSwitchyard } from './targets/switchyard.js';
import { type Target, footprint, useBenchPrompt } from './targets/target.js';
import { answerText, verify } from './targets/verify.js';
import { readCpuPressure, readCpuTimes, stealShare } from './measure/machine-contention.js';

const METHOD = {
  timing:
    'Closed loop: N connections, each sends its next request when the previous one ended; throughput counts successes that ended inside the phase. ' +
    'Open loop: requests due at a fixed rate; latency from each request\'s due time (no coordinated omission); a request written to its socket more than lateMs after it was due counts as late. ' +
    'TTFB: first body byte; latency: last byte. Percentiles are nearest-rank over successful requests; added latency = target percentile − direct percentile of the same phase.',
  cpu:
    'utime+stime from /proc/<pid>/stat of the target\'s process tree, read every 250 ms and after the load until target and PostgreSQL are idle (two 250 ms samples with at most one clock tick), divided by successful requests. ' +
    'On PostgreSQL a phase starts once the durable projections have applied every earlier event, and its load is followed by a wait until they have applied the phase\'s events (projectionsAtStart, cpu.projections), so their work is charged to the phase that caused it. ' +
    'A -px variant\'s switchyard projector process is metered the same way (projectorMs) and added into totalCpuMs.',
  postgres:
    'Backends listed by pg_stat_activity for the run\'s own database (a database per Switchyard variant), read from /proc the same way; server-wide background processes (WAL writer, checkpointer, …) are reported apart as postgresBackgroundMs, not per request, since other databases on the server share them.',
  memory: 'Sum of VmRSS of the target\'s processes (a -px variant: the gateway and its projector), sampled every 250 ms; peak per phase.',
  processes: 'The mock provider, the load generator and each target run in processes of their own; the mock\'s and the generator\'s CPU are reported per phase as a share of one core.',
};

async function main(): Promise<number> {
  const render = process.argv.indexOf('--render');
  if (render >= 0) return rerender(process.argv[render + 1]);
  let plan: BenchPlan;
  try {
    plan = parsePlan(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof OptionError)) throw error;
    process.stderr.write(`${error.message ? `${error.message}\n\n` : ''}${USAGE}`);
    return error.message ? 2 : 0;
  }
  const started = performance.now();
  const at = new Date().toISOString();
  const outDir = plan.outDir ?? defaultResultsDir;
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, at.replace(/[:.]/g, '-'));
  process.stdout.write(
    `switchyard bench: preset ${plan.preset}, targets ${plan.targets.join(',')}, variants ${plan.variants.map((v) => v.name).join(',')}, ` +
      `${plan.phases.length} phases of ${plan.durationMs / 1000} s${plan.slowStreams ? `, ${plan.slowStreams.streams} slow streams` : ''}; about ${Math.ceil(estimatedSeconds(plan) / 60)} min\n`,
  );

  useBenchPrompt(plan.promptBytes);
  const workDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  const ticks = clockTicksPerSecond();
  const { helper: mock, ready } = await HelperProcess.start<{ url: string }>(helperModule('mock-process'));
  const { helper: generator } = await HelperProcess.start(helperModule('generator-process'));
  const bench = new Bench(plan, mock, generator, ready.url, ticks);
  const cpuAtStart = readCpuTimes();
  const report: BenchReport = { at, machine: await machineInfo(ticks), plan, method: METHOD, targets: [], durationS: 0 };
  const save = () => {
    report.durationS = round3((performance.now() - started) / 1000);
    report.machine.loadAverageEnd = loadavg();
    report.machine.stealShare = stealShare(cpuAtStart, readCpuTimes());
    report.machine.cpuPressureEnd = readCpuPressure();
    writeFileSync(`${file}.json`, `${JSON.stringify(report, null, 2)}\n`);
  };
  try {
    await bench.captureExpectedAnswers();
    for (const kind of plan.targets) {
      if (kind === 'direct') report.targets.push(await bench.measure('direct', async () => directTarget(ready.url)));
      if (kind === 'bare') report.targets.push(await bench.measure('bare', () => startBareProxy(ready.url)));
      if (kind === 'portkey') report.targets.push(await bench.measure('portkey', () => startPortkey(ready.url, workDir)));
      if (kind === 'switchyard') {
        for (const variant of plan.variants) {
          // The bench measures the gateway in front of a provider; exact-cache hits would measure the cache
          // (its requests repeat). --gateway-env SWITCHYARD_CACHE=on measures that instead.
          const env = { SWITCHYARD_CACHE: 'off', ...plan.gatewayEnv, ...slowStreamAdmission(plan) };
          report.targets.push(
            await bench.measure(`switchyard:${variant.name}`, () =>
              startSwitchyard(variant, { mockUrl: ready.url, workDir, serverUrl: process.env.DATABASE_URL || null, env, streamDeployments: plan.slowStreams?.deployments ?? 0 }),
            ),
          );
        }
      }
      save();
    }
  } finally {
    await generator.stop();
    await mock.stop();
    const failed = report.targets.some((t) => t.error);
    if (plan.keep || failed) process.stdout.write(`logs and data kept in ${workDir}\n`);
    else rmSync(workDir, { recursive: true, force: true });
  }
  save();
  const markdown = renderMarkdown(report);
  writeFileSync(`${file}.md`, markdown);
  process.stdout.write(`\n${markdown}\nwritten to ${file}.json and ${file}.md\n`);
  return 0;
}

/** The tables of an earlier run, from its JSON (after a change to the tables, or to include in docs/benchmarks.md). */
function rerender(file: string | undefined): number {
  if (!file?.endsWith('.json')) {
    process.stderr.write('--render needs the path of a results .json file\n');
    return 2;
  }
  const markdown = renderMarkdown(JSON.parse(readFileSync(file, 'utf8')) as BenchReport);
  writeFileSync(file.replace(/\.json$/, '.md'), markdown);
  process.stdout.write(markdown);
  return 0;
}

/**
 * The slow-stream mode needs more streams in flight than the gateway's default admission limits allow
 * (512 streams, 1,024 requests); the run raises them and the report's environment says so.
 */
function slowStreamAdmission(plan: BenchPlan): Record<string, string> {
  if (!plan.slowStreams) return {};
  const streams = plan.slowStreams.streams;
  return { SWITCHYARD_MAX_CONCURRENT_STREAMS: String(streams + 64), SWITCHYARD_MAX_CONCURRENT_REQUESTS: String(Math.max(1024, streams + 1024)) };
}

class Bench {
  private readonly expected = new Map<Mode, string>();

  constructor(
    private readonly plan: BenchPlan,
    private readonly mock: HelperProcess,
    private readonly generator: HelperProcess,
    private readonly mockUrl: string,
    private readonly ticks: number,
  ) {}

  async captureExpectedAnswers(): Promise<void> {
    const direct = directTarget(this.mockUrl);
    for (const mode of ['buffered', 'sse'] as Mode[]) this.expected.set(mode, await answerText(direct, mode));
  }

  /** Starts a target, proves it reaches the mock, runs its phases, stops it; failures are recorded, not thrown. */
  async measure(id: string, start: () => Promise<Target | { skipped: string }>): Promise<TargetReport> {
    const kind = id.startsWith('switchyard:') ? 'switchyard' : (id as TargetReport['kind']);
    let started: Target | { skipped: string };
    try {
      started = await start();
    } catch (error) {
      log(`${id}: failed to start: ${(error as Error).message}`);
      return { id, kind, error: (error as Error).message, phases: [] };
    }
    if ('skipped' in started) {
      log(`${id}: skipped, ${started.skipped}`);
      return { id, kind, skipped: started.skipped, phases: [] };
    }
    const target = started;
    const report: TargetReport = { id, kind, details: target.details, verification: {}, phases: [] };
    try {
      report.rssAfterStartMb = rssMb(footprint(target));
      for (const mode of target.modes) {
        const phases = this.plan.phases.filter((p) => p.mode === mode);
        const needsStreams = mode === 'sse' && this.plan.slowStreams && (target.kind === 'bare' || target.kind === 'switchyard');
        if (phases.length === 0 && !needsStreams) continue;
        const verification = await verify(target, mode, this.mock, this.expected.get(mode)!);
        report.verification![mode] = verification;
        if (verification.upstreamCalls < 1 || !verification.answerMatches) {
          throw new Error(`${mode} answers do not come from the mock (${verification.upstreamCalls} mock calls, content ${verification.answerMatches ? 'matches' : 'differs'})`);
        }
        if (this.plan.warmupMs > 0 || this.plan.warmupRequests > 0) {
          const warm = await this.generator.call<{ requests: number; ms: number }>('warmup', {
            origin: target.origin, spec: target.request(mode), minMs: this.plan.warmupMs, minRequests: this.plan.warmupRequests, maxMs: 30_000, drainMs: this.plan.drainMs,
          });
          report.warmup = { ...report.warmup, [mode]: warm };
        }
        for (const phase of phases) report.phases.push(await this.runPhase(target, phase));
        if (needsStreams) report.slowStreams = await this.runSlowStreams(target);
      }
    } catch (error) {
      report.error = (error as Error).message;
      log(`${id}: ${report.error}`);
    } finally {
      await target.stop().catch((error: Error) => log(`${id}: stopping failed: ${error.message}`));
    }
    return report;
  }

  private async runPhase(target: Target, phase: Phase): Promise<PhaseReport> {
    // On a shared machine the noise drifts within minutes: the latency a gateway adds is measured
    // against a direct run of the same phase taken just before it, not one from the start of the run.
    const paired = this.plan.pairedBaseline && target.kind !== 'direct' && phase.loop === 'open' && phase.mode === 'buffered';
    const baseline = paired ? await this.load(directTarget(this.mockUrl), phase) : undefined;
    // Work left over from the warm-up or the previous phase (a projector still applying it) is not this phase's.
    const projectionsAtStart = await target.projections?.waitCaughtUp(MAX_CATCH_UP_MS);
    if (projectionsAtStart?.caughtUpMs === null) log(`${target.id} ${phase.id}: the durable projections were still ${projectionsAtStart.behindAtEnd} events behind at the phase start`);
    const loadAverage = loadavg()[0];
    const callsBefore = await this.mock.call<number>('calls');
    const meter = await PhaseMeter.start(this.metered(target), this.ticks);
    const load = await this.load(target, phase);
    await meter.endLoad();
    const cpu = await meter.finish();
    const upstreamCalls = (await this.mock.call<number>('calls')) - callsBefore;
    const per = (value: number | null) => (value === null || load.ok === 0 ? null : round3(value / load.ok));
    const perRequest = {
      targetCpuMs: target.kind === 'direct' ? null : per(cpu.targetMs),
      // Its event loop's share: what a request's latency and the process's saturation hang on (the rest is threads beside it).
      servingThreadCpuMs: target.kind === 'direct' ? null : per(cpu.servingThreadMs),
      projectorCpuMs: per(cpu.projectorMs),
      // Not in the total: a deployment's broker runs on its own machine; this one shares the bench's cores.
      brokerCpuMs: per(cpu.brokerMs),
      postgresCpuMs: per(cpu.postgresMs),
      totalCpuMs: target.kind === 'direct' ? null : per(cpu.targetMs + (cpu.projectorMs ?? 0) + (cpu.postgresMs ?? 0)),
    };
    if (cpu.projections && cpu.projections.caughtUpMs === null) {
      log(`${target.id} ${phase.id}: the durable projections were still ${cpu.projections.behindAtEnd} events behind ${MAX_CATCH_UP_MS / 1000} s after the load`);
    }
    const errors = Object.values(load.errors).reduce((a, b) => a + b, 0);
    log(
      `${target.id} ${phase.id}: ${Math.round(load.throughputRps)} rps, P50 ${load.latency?.p50 ?? '–'} ms, P99 ${load.latency?.p99 ?? '–'} ms` +
        `${phase.mode === 'sse' ? `, TTFB P50 ${load.ttfb?.p50 ?? '–'} ms` : ''}, ${errors} errors${load.late ? `, ${load.late} late` : ''}` +
        `${perRequest.totalCpuMs !== null ? `, CPU ${perRequest.totalCpuMs} ms/req (serving thread ${perRequest.servingThreadCpuMs})` : ''}` +
        `${perRequest.projectorCpuMs !== null ? ` (gateway ${perRequest.targetCpuMs}, projector ${perRequest.projectorCpuMs}, PostgreSQL ${perRequest.postgresCpuMs})` : ''}` +
        `${perRequest.brokerCpuMs !== null ? `, broker on this machine ${perRequest.brokerCpuMs} ms/req` : ''}` +
        `${cpu.projections?.caughtUpMs ? `, projections caught up ${cpu.projections.caughtUpMs} ms after the load` : ''}, generator ${Math.round(cpu.generatorCoreShare * 100)}% of a core`,
    );
    return {
      id: phase.id, mode: phase.mode, loop: phase.loop, level: phase.level, load, cpu, upstreamCalls, perRequest, baseline, loadAverage,
      ...(projectionsAtStart ? { projectionsAtStart } : {}),
    };
  }

  private load(target: Target, phase: Phase): Promise<LoadResult> {
    const job = { origin: target.origin, spec: target.request(phase.mode), drainMs: this.plan.drainMs };
    if (phase.loop === 'closed') return this.generator.call<LoadResult>('closed', { ...job, connections: phase.level, durationMs: this.plan.durationMs });
    return this.generator.call<LoadResult>('open', {
      ...job, ratePerSecond: phase.level, durationMs: this.plan.durationMs, lateMs: this.plan.lateMs, maxConnections: this.plan.maxConnections,
    });
  }

  private async runSlowStreams(target: Target): Promise<SlowStreamsReport> {
    const settings = this.plan.slowStreams!;
    await this.mock.call('behave', { chunks: settings.chunks, chunkGapMs: settings.chunkGapMs });
    const rssBeforeMb = rssMb(footprint(target));
    let rssAtPlateauMb: number | null = null;
    this.generator.on('plateau', () => (rssAtPlateauMb = rssMb(footprint(target))));
    try {
      const meter = await PhaseMeter.start(this.metered(target), this.ticks);
      const streamMs = settings.chunks * settings.chunkGapMs;
      const load = await this.generator.call<SlowStreamsResult>('slow', {
        origin: target.origin, spec: target.streamsRequest(), streams: settings.streams, rampMs: settings.rampMs, drainMs: streamMs + this.plan.drainMs,
      });
      await meter.endLoad();
      const cpu = await meter.finish();
      log(`${target.id} slow streams: ${load.ok}/${settings.streams} completed, max ${load.maxConcurrent} open at once, RSS ${rssAtPlateauMb ?? '–'} MB with all open, peak ${cpu.rssPeakMb} MB`);
      return { settings, load, rssBeforeMb, rssAtPlateauMb, rssPeakMb: cpu.rssPeakMb, cpu };
    } finally {
      await this.mock.call('behave', { chunks: 12, chunkGapMs: 0 });
    }
  }

  private metered(target: Target) {
    return {
      target: () => target.processes(),
      projector: () => target.projectorProcesses?.() ?? [],
      broker: () => target.brokerProcesses?.() ?? [],
      postgres: target.postgres,
      projections: target.projections ?? null,
      mock: this.mock.pid,
      generator: this.generator.pid,
    };
  }
}

function rssMb(pids: number[]): number | null {
  if (pids.length === 0) return null;
  return Math.round(pids.reduce((sum, pid) => sum + readRssKb(pid), 0) / 1024);
}

async function machineInfo(ticks: number): Promise<MachineInfo> {
  let postgres: string | null = null;
  if (process.env.DATABASE_URL) {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    postgres = (await client.query<{ v: string }>("select 'PostgreSQL ' || current_setting('server_version') as v")).rows[0].v;
    await client.end();
  }
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryMb: Math.round(totalmem() / 1024 / 1024),
    kernel: release(),
    node: process.version,
    postgres,
    loadAverageStart: loadavg(),
    loadAverageEnd: [],
    cpuPressureStart: readCpuPressure(),
    clockTicksPerSecond: ticks,
  };
}

function log(line: string): void {
  process.stdout.write(`  ${line}\n`);
}

process.exit(await main());
