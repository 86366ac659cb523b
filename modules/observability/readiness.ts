import type { LimitsRedis } from '../limits/index.js';
import type { ClickHouseConnection } from '../../projections/clickhouse-analytics/index.js';
import { type Database, type ProjectionHalt, type ProjectionRunner, describeHalt } from '../../src/kernel/index.js';

/** How long each dependency may take to answer a readiness probe. */
const PROBE_TIMEOUT_MS = 1_000;

export interface DependencyCheck {
  /** ok, or why not. */
  status: 'ok' | 'failing' | 'not_configured';
  /** Whether a failure makes the node unready (it cannot serve correctly without it). */
  required: boolean;
  detail?: string;
}

export interface ProjectionLag {
  name: string;
  kind: 'in-memory' | 'durable';
  behind: number;
  lastError: string | null;
}

/** The outage spool as readiness sees it. */
export interface SpoolFill {
  bytes: number;
  maxBytes: number;
  /** It refuses requests: the last append it was offered did not fit (OutageSpool.full). */
  full: boolean;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<'eventStore' | 'projections' | 'durableProjections' | 'redis' | 'clickhouse', DependencyCheck>;
  /** Each failing part, by name. */
  problems: string[];
  lags: ProjectionLag[];
  /** Durable projections halted at an event they cannot apply, wherever they run. */
  halted: ProjectionHalt[];
}

/**
 * What decides readiness, as a pure function of what was probed. Unready: the event store does not
 * answer and no outage spool absorbs it (every answer is committed — to the store, or during an outage
 * fsynced to the spool — before it is delivered), the spool is full (it refuses requests), or an in-memory
 * projection (routing snapshot, key index) is more than `maxLagEvents` behind — the node would route by a
 * stale catalog or accept revoked keys. Reported but not unready: an event-store outage the spool absorbs
 * (DESIGN §7: the durability promise is kept through the spool; nothing can change the catalog or the keys
 * meanwhile, so the snapshot is not stale), Redis (limits and breakers fall back to this node's own),
 * ClickHouse (its projection catches up) and durable projections that lag (billing catches up; serving does
 * not depend on it): taking every node out of the load balancer for those would turn a degraded dependency
 * into an outage. The same holds for a durable projection halted at an event it cannot apply (`halted`):
 * every answer is still committed to the log before it is delivered, so nothing is lost — the ledger (or the
 * chain, or the analytics) stops at that event and is brought up to date from the log once resumed. Every
 * node is equally unable to fix it, and pulling them all would stop every tenant's traffic for one bad event;
 * it is reported loudly instead (problems, `checks.durableProjections`, the `switchyard_projection_halted`
 * metric), naming the event and the error.
 */
export function readinessVerdict(input: {
  eventStore: { reachable: boolean; problems: string[] };
  /**
   * The event-store outage spool's fill (null without one: PGlite, or SWITCHYARD_SPOOL_MAX_BYTES=0). While
   * it has room, an unreachable PostgreSQL does not make the node unready: it serves from its snapshot and
   * keeps every request's events on local disk (DESIGN §7); pulling it would turn an outage of the control
   * plane's store into an outage of the data plane. A full spool refuses requests, so the node is unready.
   */
  spool?: SpoolFill | null;
  lags: ProjectionLag[] | null;
  redis: DependencyCheck;
  clickhouse: DependencyCheck;
  maxLagEvents: number;
  halted?: ProjectionHalt[];
}): ReadinessReport {
  const problems = [...input.eventStore.problems];
  const lags = input.lags ?? [];
  const stale = lags.filter((lag) => lag.kind === 'in-memory' && lag.behind > input.maxLagEvents);
  for (const lag of stale) problems.push(`projection ${lag.name}: ${lag.behind} events behind (more than ${input.maxLagEvents})`);
  for (const lag of lags) if (lag.lastError !== null) problems.push(`projection ${lag.name}: failing, retrying`);
  const halted = input.halted ?? [];
  for (const halt of halted) {
    problems.push(`projection ${halt.name}: ${describeHalt(halt)} — its read model stops there, serving continues; fix the cause and run \`switchyard projections resume ${halt.name}\``);
  }
  if (input.redis.status === 'failing') problems.push(`redis: ${input.redis.detail ?? 'not answering'} (limits and breakers are local meanwhile)`);
  if (input.clickhouse.status === 'failing') problems.push(`clickhouse: ${input.clickhouse.detail ?? 'not answering'} (analytics catch up when it returns)`);
  const spool = input.spool ?? null;
  const reachable = input.eventStore.reachable;
  // A full spool refuses requests while they must go to it: during the outage, and while it drains a backlog.
  const spoolFull = spool !== null && spool.full && (!reachable || spool.bytes > 0);
  const spoolServing = !reachable && spool !== null && !spoolFull;
  if (spoolServing) problems.push(`event store unreachable: serving from the routing snapshot, request events spooled locally (${spool.bytes} of ${spool.maxBytes} bytes)`);
  else if (spoolFull && !reachable) problems.push(`event store unreachable and the outage spool is full (${spool.maxBytes} bytes): requests are refused`);
  // Reachable again, but the spool's backlog is still ahead of new appends: they are refused until a segment drains.
  else if (spoolFull) problems.push(`the outage spool is full (${spool.maxBytes} bytes) and draining: requests are refused until it has room`);
  const projections: DependencyCheck = input.lags === null
    ? { status: 'failing', required: !spoolServing, detail: 'lag unknown: the event store does not answer' }
    : stale.length > 0 ? { status: 'failing', required: true, detail: stale.map((lag) => lag.name).join(', ') } : { status: 'ok', required: true };
  const eventStore: DependencyCheck = !reachable
    ? { status: 'failing', required: !spoolServing, detail: spoolServing ? 'not reachable; request events go to the outage spool' : spoolFull ? 'not reachable; the outage spool is full' : 'not reachable' }
    : spoolFull ? { status: 'failing', required: true, detail: 'reachable; the outage spool is full and draining' } : { status: 'ok', required: true };
  const durableProjections: DependencyCheck = halted.length > 0
    ? { status: 'failing', required: false, detail: halted.map((halt) => `${halt.name} ${describeHalt(halt)}`).join('; ') }
    : { status: 'ok', required: false };
  const checks = { eventStore, projections, durableProjections, redis: input.redis, clickhouse: input.clickhouse };
  return { ready: Object.values(checks).every((check) => !check.required || check.status !== 'failing'), checks, problems, lags, halted };
}

/**
 * Probes the node's dependencies for /readyz and /admin/v1/status. Redis is not probed here: its check is
 * what the limits' own probe found (LimitsRedis, a PING every second off the request path), so readiness,
 * `limits` in the status and `switchyard_limits_degraded` say the same thing at the same moment.
 */
export class Readiness {
  constructor(
    private readonly database: Database,
    private readonly runner: ProjectionRunner,
    /** Null without CLICKHOUSE_URL. */
    private readonly clickhouse: ClickHouseConnection | null,
    private readonly redis: Pick<LimitsRedis, 'configured' | 'status'>,
    private readonly maxLagEvents: number,
  ) {}

  private spool: (() => SpoolFill) | null = null;

  /** The serving process's outage spool, so an outage it absorbs does not make the node unready. */
  readSpoolFrom(read: () => SpoolFill): void {
    this.spool = read;
  }

  async report(): Promise<ReadinessReport> {
    const { database, runner, clickhouse } = this;
    const eventStore = await database.checkHealth(PROBE_TIMEOUT_MS);
    const statuses = new Map(runner.status().map((status) => [status.name, status]));
    const [lags, halted, redis, clickhouseCheck] = await Promise.all([
      eventStore.reachable
        ? withTimeout(runner.lag(this.maxLagEvents + 1)).then(
          (found) => found.map((lag) => Object.assign({}, lag, { lastError: statuses.get(lag.name)?.lastError ?? null })),
          () => null,
        )
        : Promise.resolve(null),
      // From projection_halts: a halted projection shows on every node, wherever it runs.
      eventStore.reachable ? withTimeout(runner.halts()).catch(() => localHalts(runner)) : Promise.resolve(localHalts(runner)),
      Promise.resolve(this.redisCheck()),
      clickhouse
        ? withTimeout(clickhouse.ping()).then(
          (ok): DependencyCheck => (ok ? { status: 'ok', required: false } : { status: 'failing', required: false, detail: 'ping failed' }),
          (): DependencyCheck => ({ status: 'failing', required: false, detail: 'not answering' }),
        )
        : Promise.resolve<DependencyCheck>({ status: 'not_configured', required: false }),
    ]);
    return readinessVerdict({ eventStore, lags, halted, redis, clickhouse: clickhouseCheck, maxLagEvents: this.maxLagEvents, spool: this.spool?.() ?? null });
  }

  private redisCheck(): DependencyCheck {
    if (!this.redis.configured) return { status: 'not_configured', required: false };
    return this.redis.status().degraded ? { status: 'failing', required: false, detail: 'not answering' } : { status: 'ok', required: false };
  }
}

function localHalts(runner: ProjectionRunner): ProjectionHalt[] {
  return runner.status().flatMap((status) => (status.halted ? [status.halted] : []));
}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), PROBE_TIMEOUT_MS))),
  ]).finally(() => clearTimeout(timer));
}
