import { parseArgs } from 'node:util';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LoopKind, Mode } from './load/sample.js';
import { gatewayProfilerModule, phaseProbeModule } from './paths.js';
import type { TargetKind } from './targets/target.js';

/** A Switchyard configuration under test: event store, durability profile, worker processes. */
export interface Variant {
  name: string;
  store: 'pglite' | 'postgres';
  durability: 'default' | 'strict' | 'async';
  /** SWITCHYARD_WORKERS; null = not set (one process). */
  workers: number | null;
  /**
   * Where the durable projections (ledger, spend, audit chain) run: in the gateway (the default), or in a
   * `switchyard projector` process next to it, the gateway started with SWITCHYARD_PROJECTOR=external.
   */
  projector: 'embedded' | 'external';
  /**
   * A `-pii` variant: a content policy with every local detector on (mask or tokenize) attached to the bench
   * tenant, so the report shows what content safety costs on the request path (docs/benchmarks.md).
   */
  contentPolicy: boolean;
  /**
   * A `-relay` variant: the relay publishes the log to NATS JetStream (BENCH_RELAY_URL, default
   * nats://127.0.0.1:4222) while the gateway serves, so the report shows what events-out costs the serving path.
   */
  relay: boolean;
}

export interface Phase {
  id: string;
  mode: Mode;
  loop: LoopKind;
  /** Connections (closed) or requests per second (open). */
  level: number;
}

export interface SlowStreamSettings {
  streams: number;
  /** Switchyard: deployments (of the same mock) the streams are weighted over. */
  deployments: number;
  chunks: number;
  chunkGapMs: number;
  rampMs: number;
}

export interface BenchPlan {
  preset: string;
  targets: TargetKind[];
  variants: Variant[];
  phases: Phase[];
  durationMs: number;
  /** Unmeasured load per target and mode: at least this long and `warmupRequests` requests (30 s at most). */
  warmupMs: number;
  warmupRequests: number;
  lateMs: number;
  drainMs: number;
  maxConnections: number;
  slowStreams: SlowStreamSettings | null;
  /** Extra environment for every Switchyard process (recorded in the report). */
  gatewayEnv: Record<string, string>;
  outDir: string | null;
  note: string | null;
  /** Keep the work directory (gateway logs, PGlite data) instead of removing it. */
  keep: boolean;
  /** Run the direct baseline again right before each gateway's buffered open-loop phase. */
  pairedBaseline: boolean;
  /** Bytes of the prompt every target is sent (prose with personal data in it); 0: the short default prompt. */
  promptBytes: number;
}

export const USAGE = `Usage: npm run bench -- [options]

  --preset quick|full     quick (default): c=32 and 300 rps buffered, SSE at c=1, 3 s phases, embedded
                          and (with DATABASE_URL) PostgreSQL default durability; 1–2 minutes.
                          full: every load below, both modes, every variant, slow streams; see docs/benchmarks.md.
  --targets LIST          direct,bare,portkey,switchyard (default: all)
  --variants LIST         Switchyard variants <store>-<durability>[-w<N>][-px][-pii]: store pglite|pg, durability
                          default|strict|async, -wN sets SWITCHYARD_WORKERS=N (e.g. pg-default-w2), -px runs
                          the durable projections in a \`switchyard projector\` process next to the gateway
                          (SWITCHYARD_PROJECTOR=external; PostgreSQL only; its CPU is counted in the total),
                          -pii attaches a content policy with every local detector on (mask/tokenize),
                          -relay publishes the log to NATS while serving (BENCH_RELAY_URL, nats://127.0.0.1:4222)
  --prompt-bytes N        the prompt every target is sent: N bytes of prose with personal data in it (e.g.
                          4096 for the content-safety comparison); default: a two-word prompt
  --loads LIST            closed:<connections> and open:<rps>, e.g. closed:1,closed:32,open:300
  --modes LIST            buffered,sse (crossed with --loads)
  --phases LIST           explicit <mode>:<loop>:<level> list, e.g. buffered:closed:32,sse:closed:1
  --duration S            seconds per measured phase
  --warmup S              at least this many seconds of unmeasured load per target and mode
  --warmup-requests N     … and at least this many requests (the JIT needs thousands; at most 30 s)
  --slow-streams N        also hold N concurrent slow SSE streams and read the target's RSS (0 = off)
  --slow-chunks N         chunks per slow stream (default 40)
  --slow-chunk-gap-ms N   delay between a slow stream's chunks (default 250)
  --slow-deployments N    Switchyard deployments (same mock) the slow streams are weighted over (8);
                          1 shows the bound of one deployment's upstream pool
  --late-ms N             an open-loop request written later than this after its due time is late (2)
  --drain S               how long to wait for a phase's last responses (10)
  --max-connections N     most sockets the open-loop generator opens (2048)
  --gateway-env K=V       extra environment for Switchyard (repeatable; recorded in the report)
  --gateway-profile DIR   V8 CPU profile of each gateway process, from its first /v1/ request to its
                          exit, into DIR (read with node dist/bench/profile/summarize.js; slows it)
  --gateway-heap-profile DIR  the same with V8's sampling heap profiler: bytes allocated, by function
  --gateway-phases DIR    when each of the gateway's requests reached each step of its path (and the durable
                          projections' pages, the collector's pauses) into DIR (read with node
                          dist/bench/profile/phases.js; can be combined with one profiler)
  --gateway-survivor-profile DIR  the heap profiler counting only what outlived a young-generation
                          collection (what is promoted and makes scavenges long), by function
  --out DIR               where the JSON and markdown go (bench/results)
  --note TEXT             free text recorded in the report (e.g. "machine shared with builds")
  --unpaired              compare open-loop latency with the direct run at the start only, not with a
                          direct run of the same phase just before each gateway's (saves time)
  --render FILE.json      print (and write next to it) the tables of an earlier run, running nothing
  --keep                  keep the work directory (each target's log, PGlite data); kept anyway on failure
`;

const ALL_TARGETS: TargetKind[] = ['direct', 'bare', 'portkey', 'switchyard'];
const FULL_LOADS = ['closed:1', 'closed:32', 'closed:128', 'open:300', 'open:1000', 'open:3000'];

interface Preset {
  variants: string[];
  phases: string[];
  duration: number;
  warmup: number;
  warmupRequests: number;
  slowStreams: number;
}

function preset(name: string, hasDatabase: boolean): Preset {
  if (name === 'quick') {
    return {
      variants: hasDatabase ? ['pglite-default', 'pg-default'] : ['pglite-default'],
      phases: ['buffered:closed:32', 'buffered:open:300', 'sse:closed:1'],
      duration: 3,
      warmup: 1,
      warmupRequests: 2000,
      slowStreams: 0,
    };
  }
  if (name === 'full') {
    return {
      variants: hasDatabase
        ? ['pglite-default', 'pglite-async', 'pg-default', 'pg-async', 'pg-default-w2', 'pg-async-w2']
        : ['pglite-default', 'pglite-async'],
      phases: cross(FULL_LOADS, ['buffered', 'sse']),
      duration: 10,
      warmup: 3,
      warmupRequests: 5000,
      slowStreams: 1000,
    };
  }
  throw new OptionError(`unknown preset "${name}" (quick or full)`);
}

export class OptionError extends Error {
  override readonly name = 'OptionError';
}

export function parsePlan(argv: string[], env: NodeJS.ProcessEnv = process.env): BenchPlan {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        preset: { type: 'string', default: 'quick' },
        targets: { type: 'string' },
        variants: { type: 'string' },
        loads: { type: 'string' },
        modes: { type: 'string' },
        phases: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        'warmup-requests': { type: 'string' },
        'slow-streams': { type: 'string' },
        'slow-chunks': { type: 'string', default: '40' },
        'slow-deployments': { type: 'string', default: '8' },
        'slow-chunk-gap-ms': { type: 'string', default: '250' },
        'late-ms': { type: 'string', default: '2' },
        drain: { type: 'string', default: '10' },
        'max-connections': { type: 'string', default: '2048' },
        'gateway-env': { type: 'string', multiple: true },
        'gateway-profile': { type: 'string' },
        'gateway-heap-profile': { type: 'string' },
        'gateway-survivor-profile': { type: 'string' },
        'gateway-phases': { type: 'string' },
        out: { type: 'string' },
        note: { type: 'string' },
        keep: { type: 'boolean', default: false },
        unpaired: { type: 'boolean', default: false },
        'prompt-bytes': { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (error) {
    throw new OptionError((error as Error).message);
  }
  if (values.help) throw new OptionError('');
  const hasDatabase = Boolean(env.DATABASE_URL);
  const base = preset(values.preset!, hasDatabase);

  const targets = values.targets ? list(values.targets).map(targetKind) : ALL_TARGETS;
  const variants = (values.variants ? list(values.variants) : base.variants).map(parseVariant);
  if (!hasDatabase && variants.some((v) => v.store === 'postgres')) {
    throw new OptionError('PostgreSQL variants (pg-…) need DATABASE_URL (a server on which the bench may create databases)');
  }
  let phaseIds = base.phases;
  if (values.phases) {
    if (values.loads || values.modes) throw new OptionError('use either --phases or --loads/--modes');
    phaseIds = list(values.phases);
  } else if (values.loads || values.modes) {
    phaseIds = cross(values.loads ? list(values.loads) : FULL_LOADS, values.modes ? list(values.modes) : ['buffered', 'sse']);
  }
  const phases = unique(phaseIds.map(parsePhase));
  const streams = values['slow-streams'] === undefined ? base.slowStreams : positiveInt(values['slow-streams'], '--slow-streams', true);
  return {
    preset: values.preset!,
    targets: unique(targets),
    variants: uniqueBy(variants, (v) => v.name),
    phases,
    durationMs: seconds(values.duration, base.duration, '--duration'),
    warmupMs: seconds(values.warmup, base.warmup, '--warmup', true),
    warmupRequests: values['warmup-requests'] === undefined ? base.warmupRequests : positiveInt(values['warmup-requests'], '--warmup-requests', true),
    lateMs: positiveNumber(values['late-ms']!, '--late-ms'),
    drainMs: seconds(values.drain, 10, '--drain'),
    maxConnections: positiveInt(values['max-connections']!, '--max-connections'),
    slowStreams: streams > 0
      ? { streams, deployments: positiveInt(values['slow-deployments']!, '--slow-deployments'), chunks: positiveInt(values['slow-chunks']!, '--slow-chunks'), chunkGapMs: positiveInt(values['slow-chunk-gap-ms']!, '--slow-chunk-gap-ms'), rampMs: Math.min(5_000, streams * 2) }
      : null,
    gatewayEnv: { ...Object.fromEntries((values['gateway-env'] ?? []).map(parseEnvPair)), ...probeEnv(profilerEnv(values['gateway-profile'], values['gateway-heap-profile'], values['gateway-survivor-profile']), values['gateway-phases']) },
    outDir: values.out ?? null,
    note: values.note ?? null,
    keep: values.keep ?? false,
    pairedBaseline: !values.unpaired,
    promptBytes: values['prompt-bytes'] === undefined ? 0 : positiveInt(values['prompt-bytes'], '--prompt-bytes', true),
  };
}

/** The environment that loads the profiler into the gateway (Node refuses --cpu-prof in NODE_OPTIONS). */
function profilerEnv(cpuDir: string | undefined, heapDir: string | undefined, survivorDir: string | undefined): Record<string, string> {
  const chosen = [cpuDir, heapDir, survivorDir].filter((d) => d !== undefined);
  if (chosen.length > 1) throw new OptionError('use one of --gateway-profile, --gateway-heap-profile and --gateway-survivor-profile: one profiler at a time');
  const dir = chosen[0];
  if (dir === undefined) return {};
  const absolute = resolve(dir);
  mkdirSync(absolute, { recursive: true });
  return {
    NODE_OPTIONS: `--import=${pathToFileURL(gatewayProfilerModule).href}`,
    BENCH_PROFILE_DIR: absolute,
    ...(heapDir !== undefined ? { BENCH_PROFILE_KIND: 'heap' } : {}),
    ...(survivorDir !== undefined ? { BENCH_PROFILE_KIND: 'survivors' } : {}),
  };
}

/** Adds the phase probe to the gateway's environment (beside a profiler, if one is loaded). */
function probeEnv(env: Record<string, string>, phasesDir: string | undefined): Record<string, string> {
  if (phasesDir === undefined) return env;
  const absolute = resolve(phasesDir);
  mkdirSync(absolute, { recursive: true });
  const probe = `--import=${pathToFileURL(phaseProbeModule).href}`;
  return { ...env, NODE_OPTIONS: env.NODE_OPTIONS ? `${env.NODE_OPTIONS} ${probe}` : probe, BENCH_PHASES_DIR: absolute };
}

export function parseVariant(name: string): Variant {
  const match = /^(pglite|pg)-(default|strict|async)(?:-w(\d+))?(-px)?(-pii)?(-relay)?$/.exec(name);
  if (!match) throw new OptionError(`variant "${name}" is not <pglite|pg>-<default|strict|async>[-w<N>][-px][-pii][-relay]`);
  const workers = match[3] === undefined ? null : Number(match[3]);
  const projector = match[4] === undefined ? 'embedded' : 'external';
  if (workers !== null && workers < 1) throw new OptionError(`variant "${name}": -w needs at least one worker`);
  if (workers !== null && match[1] === 'pglite') throw new OptionError(`variant "${name}": the embedded store is one process by design; workers need PostgreSQL`);
  if (projector === 'external' && match[1] === 'pglite') throw new OptionError(`variant "${name}": the embedded store is one process by design; a separate projector needs PostgreSQL`);
  return { name, store: match[1] === 'pg' ? 'postgres' : 'pglite', durability: match[2] as Variant['durability'], workers, projector, contentPolicy: match[5] !== undefined, relay: match[6] !== undefined };
}

export function parsePhase(id: string): Phase {
  const match = /^(buffered|sse):(closed|open):(\d+)$/.exec(id);
  if (!match || Number(match[3]) < 1) throw new OptionError(`phase "${id}" is not <buffered|sse>:<closed|open>:<positive number>`);
  return { id, mode: match[1] as Mode, loop: match[2] as LoopKind, level: Number(match[3]) };
}

/** What a plan costs in wall time, roughly: measured phases, warm-ups and drains. */
export function estimatedSeconds(plan: BenchPlan): number {
  const perTarget = (modes: Mode[], startup: number, paired = plan.pairedBaseline) => {
    const phases = plan.phases.filter((p) => modes.includes(p.mode));
    const baselines = paired ? phases.filter((p) => p.mode === 'buffered' && p.loop === 'open').length : 0;
    const warmups = new Set(phases.map((p) => p.mode)).size;
    // A warm-up lasts until its request count too; ~1,500 requests/s is a slow target's pace here.
    const warmup = Math.min(30, Math.max(plan.warmupMs / 1000, plan.warmupRequests / 1500));
    return startup + (phases.length + baselines) * (plan.durationMs / 1000 + 1) + warmups * warmup;
  };
  const slow = plan.slowStreams ? plan.slowStreams.rampMs / 1000 + (plan.slowStreams.chunks * plan.slowStreams.chunkGapMs) / 1000 + 3 : 0;
  let total = 0;
  for (const target of plan.targets) {
    if (target === 'direct') total += perTarget(['buffered', 'sse'], 0, false);
    if (target === 'bare') total += perTarget(['buffered', 'sse'], 1) + slow;
    if (target === 'portkey') total += perTarget(['buffered'], 3);
    if (target === 'switchyard') total += plan.variants.length * (perTarget(['buffered', 'sse'], 5) + slow);
  }
  return Math.round(total);
}

function cross(loads: string[], modes: string[]): string[] {
  return modes.flatMap((mode) => loads.map((load) => `${mode}:${load}`));
}

function list(value: string): string[] {
  return value.split(',').map((item) => item.trim()).filter(Boolean);
}

function targetKind(name: string): TargetKind {
  if (!(ALL_TARGETS as string[]).includes(name)) throw new OptionError(`unknown target "${name}" (${ALL_TARGETS.join(', ')})`);
  return name as TargetKind;
}

function seconds(value: string | undefined, fallback: number, flag: string, zeroAllowed = false): number {
  if (value === undefined) return fallback * 1000;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0 || (!zeroAllowed && parsed === 0)) throw new OptionError(`${flag} must be a positive number of seconds`);
  return parsed * 1000;
}

function positiveInt(value: string, flag: string, zeroAllowed = false): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || (!zeroAllowed && parsed === 0)) throw new OptionError(`${flag} must be a positive integer`);
  return parsed;
}

function positiveNumber(value: string, flag: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new OptionError(`${flag} must be a positive number`);
  return parsed;
}

function parseEnvPair(pair: string): [string, string] {
  const at = pair.indexOf('=');
  if (at <= 0) throw new OptionError(`--gateway-env "${pair}" is not KEY=VALUE`);
  return [pair.slice(0, at), pair.slice(at + 1)];
}

function unique<T>(items: T[]): T[] {
  return uniqueBy(items, (item) => JSON.stringify(item));
}

function uniqueBy<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => (seen.has(key(item)) ? false : (seen.add(key(item)), true)));
}
