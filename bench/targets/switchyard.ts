import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { PostgresBackends } from '../measure/postgres-backends.js';
import { ProjectionLag } from '../measure/projection-lag.js';
import { processTree } from '../measure/proc.js';
import type { Variant } from '../options.js';
import { NODE_FLAGS, SERVING_ENV } from '../../src/cli/serving-flags.js';
import { gatewayMain } from '../paths.js';
import { type BenchDatabase, createBenchDatabase } from './bench-database.js';
import { localNatsServerPids } from '../measure/local-broker.js';
import { freePort, logTail, spawnLogged, stopChild, waitForHttp } from './launch.js';
import { CHAT_PATH, type Target, chatBody } from './target.js';

export interface SwitchyardContext {
  mockUrl: string;
  workDir: string;
  /** DATABASE_URL of the server the PostgreSQL variants get their own database on. */
  serverUrl: string | null;
  /** Extra environment: --gateway-env, and admission limits raised for the slow-stream mode. */
  env: Record<string, string>;
  /** Deployments behind the slow-stream alias (0: no such alias). */
  streamDeployments: number;
}

/** Variables of the caller's shell that would change what is measured without the report saying so. */
const CONTROLLED = /^(SWITCHYARD_|DATABASE_URL$|REDIS_URL$|CLICKHOUSE_URL$|ADMIN_TOKEN$|PORT$|HOST$|LOG_LEVEL$|NODE_OPTIONS$|MALLOC_)/;

/**
 * Switchyard as a user runs it (`switchyard serve`, the compiled dist/), one alias on the mock, every
 * request on the event log and the ledger, in the variant's store and durability profile. A -px variant
 * also runs `switchyard projector` next to it, the gateway started with SWITCHYARD_PROJECTOR=external.
 */
export async function startSwitchyard(variant: Variant, ctx: SwitchyardContext): Promise<Target | { skipped: string }> {
  const dir = join(ctx.workDir, `switchyard-${variant.name}`);
  mkdirSync(dir, { recursive: true });
  const key = generateApiKey();
  const config = join(dir, 'switchyard.yaml');
  writeFileSync(config, benchConfig(ctx.mockUrl, ctx.streamDeployments, variant.contentPolicy));
  let database: BenchDatabase | null = null;
  if (variant.store === 'postgres') {
    if (!ctx.serverUrl) return { skipped: 'needs DATABASE_URL' };
    database = await createBenchDatabase(ctx.serverUrl, variant.name);
  }
  const port = await freePort();
  const settings: Record<string, string> = {
    ...SERVING_ENV,
    PORT: String(port),
    HOST: '127.0.0.1',
    SWITCHYARD_CONFIG: config,
    SWITCHYARD_DATA_DIR: join(dir, 'data'),
    SWITCHYARD_DURABILITY: variant.durability,
    LOG_LEVEL: 'warn',
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...(variant.workers !== null ? { SWITCHYARD_WORKERS: String(variant.workers) } : {}),
    ...(variant.projector === 'external' ? { SWITCHYARD_PROJECTOR: 'external' } : {}),
    ...(variant.relay ? { SWITCHYARD_RELAY_URL: process.env.BENCH_RELAY_URL || 'nats://127.0.0.1:4222' } : {}),
    ...ctx.env,
  };
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !CONTROLLED.test(name)));
  const log = join(dir, 'gateway.log');
  const child = spawnLogged(process.execPath, [...NODE_FLAGS, gatewayMain, 'serve'], { ...inherited, ...settings, BENCH_KEY: key }, log);
  const origin = `http://127.0.0.1:${port}`;
  const started = performance.now();
  let pids: number[] = [];
  let postgres: PostgresBackends | null = null;
  let projections: ProjectionLag | null = null;
  let projector: ChildProcess | null = null;
  let brokerPids: number[] | undefined;
  const projectorLog = join(dir, 'projector.log');
  const stop = async () => {
    await stopChild(child);
    // Workers the primary did not take down with it are still ours to end, by pid.
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (projector) await stopChild(projector);
    await projections?.close();
    await postgres?.close();
    await database?.drop();
  };
  try {
    await waitForHttp(`${origin}/healthz`, child, (status) => status === 200, 120_000);
    if (database && ctx.serverUrl) {
      postgres = await PostgresBackends.open(ctx.serverUrl, database.name);
      projections = await ProjectionLag.open(database.url);
      postgres.leaveOut(projections.pid);
    }
    // After the gateway: it has migrated the database and applied the configuration by now.
    if (variant.projector === 'external' && projections) projector = await startProjector({ ...inherited, ...settings }, projectorLog, projections);
  } catch (error) {
    await stop();
    const projectorTail = projector || variant.projector === 'external' ? `\nprojector:\n${logTail(projectorLog)}` : '';
    throw new Error(`Switchyard (${variant.name}) ${(error as Error).message}\n${logTail(log)}${projectorTail}`);
  }
  const startupMs = Math.round(performance.now() - started);
  if (variant.workers !== null) await new Promise((resolve) => setTimeout(resolve, 1_500)); // let every worker come up
  pids = processTree(child.pid!);
  if (variant.workers !== null && pids.length < 2) {
    await stop();
    return { skipped: `the gateway ignored SWITCHYARD_WORKERS=${variant.workers} (it ran as one process)` };
  }
  const { PORT: _port, SWITCHYARD_CONFIG: _config, SWITCHYARD_DATA_DIR: _data, DATABASE_URL: _url, ...reported } = settings;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  return {
    id: `switchyard:${variant.name}`,
    kind: 'switchyard',
    origin,
    modes: ['buffered', 'sse'],
    request: (mode) => ({ path: CHAT_PATH, headers, body: chatBody('bench', mode), stream: mode === 'sse' }),
    streamsRequest: () => ({ path: CHAT_PATH, headers, body: chatBody(ctx.streamDeployments > 0 ? 'bench-streams' : 'bench', 'sse'), stream: true }),
    processes: () => {
      pids = processTree(child.pid!);
      return pids;
    },
    projectorProcesses: () => (projector ? processTree(projector.pid!) : []),
    // Looked up once: the machine's broker outlives the run.
    ...(variant.relay ? { brokerProcesses: () => (brokerPids ??= localNatsServerPids(settings.SWITCHYARD_RELAY_URL)) } : {}),
    postgres,
    ...(projections ? { projections } : {}),
    details: {
      variant,
      environment: reported,
      database: database?.name ?? null,
      processes: pids.length,
      projector: projector ? { log: projectorLog } : null,
      startupMs,
      postgresCpu: postgres ? (postgres.local ? 'backends of the run database from /proc' : 'server is not on this machine: not measured') : null,
      log,
    },
    stop,
  };
}

/**
 * `switchyard projector` with the gateway's settings, once it has caught up with the log the gateway
 * wrote while starting (the configuration's events): then it holds the projections' leases and works.
 */
async function startProjector(env: NodeJS.ProcessEnv, log: string, projections: ProjectionLag): Promise<ChildProcess> {
  const child = spawnLogged(process.execPath, [...NODE_FLAGS, gatewayMain, 'projector'], env, log);
  const until = Date.now() + 60_000;
  while ((await projections.behind()) > 0) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`projector exited with ${child.signalCode ?? child.exitCode} while starting`);
    if (Date.now() > until) {
      await stopChild(child);
      throw new Error('projector did not catch up with the log within 60 s of its start');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return child;
}

/**
 * One provider (the mock), one deployment with a price, one alias, one tenant and one key. For the
 * slow-stream mode also an alias weighted over several deployments of the same mock: each deployment's
 * upstream pool holds a bounded number of connections, and a thousand streams through one deployment
 * measure that bound rather than the gateway's memory.
 */
export function benchConfig(mockUrl: string, streamDeployments: number, contentPolicy = false): string {
  const ids = Array.from({ length: streamDeployments }, (_, i) => `bench-stream-${i + 1}`);
  const deployments = ids.map((id) => `  - { id: ${id}, provider: bench-mock, model: bench-model, capabilities: [chat, streaming], contextWindow: 32000, maxOutputTokens: 4096, price: { inputPer1M: "1.00", outputPer1M: "2.00" } }\n`).join('');
  const alias = ids.length > 0 ? `  - { name: bench-streams, strategy: weighted, routes: [${ids.map((id) => `{ deployment: ${id}, weight: 1 }`).join(', ')}] }\n` : '';
  return `providers:
  - { id: bench-mock, type: openai-compatible, baseUrl: "${mockUrl}/v1", allowPrivateNetwork: true }
deployments:
  - id: bench
    provider: bench-mock
    model: bench-model
    capabilities: [chat, streaming]
    contextWindow: 32000
    maxOutputTokens: 4096
    price: { inputPer1M: "1.00", outputPer1M: "2.00" }
${deployments}aliases:
  - { name: bench, routes: [{ deployment: bench }] }
${alias}${contentPolicy ? BENCH_CONTENT_POLICY : ''}tenants:
  - { id: bench${contentPolicy ? ', contentPolicy: bench-pii' : ''} }
apiKeys:
  - { id: bench, tenant: bench, key: env:BENCH_KEY, scopes: [inference] }
`;
}

/** The `-pii` variants' policy: every local detector on, each with the action a privacy-minded operator would pick. */
const BENCH_CONTENT_POLICY = `contentPolicies:
  - id: bench-pii
    input: { email: tokenize, phone: tokenize, card: mask, iban: mask, national_id: mask, ip_address: mask, secret: mask,
             prompt_injection: log, custom: [{ name: order-code, pattern: "ORD-[0-9]{8}", action: mask }],
             deny_terms: { terms: ["project nightingale", "codename osprey"], action: mask } }
    output: { email: mask, secret: mask }
`;
