import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';

/** How often the limits' Redis connection is asked for a PING, on a timer of its own (never on a request's path). */
export const REDIS_PROBE_INTERVAL_MS = 1_000;
/**
 * How long any command on that connection — a request's script or the probe's PING — may take before
 * Redis counts as not answering. A closed connection counts at once; a Redis that stops answering on an
 * open one (hung, paused, a network partition) is seen by the next PING to time out: within
 * REDIS_PROBE_INTERVAL_MS + REDIS_COMMAND_TIMEOUT_MS (1.5 s) of its last answer. docs/keys-limits-budgets.md ("Rate limits") states this bound.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 500;

/** Where the limits' counters are right now, for /admin/v1/status. */
export interface LimitsRedisStatus {
  /** `redis`: one counter per scope shared by every node; `local`: counted by this node alone. */
  backend: 'redis' | 'local';
  /** Redis is configured but not answering: this node counts alone until it answers again. */
  degraded: boolean;
  degradedSince: string | null;
}

/**
 * The Redis connection of rate limits, budgets and shared concurrency, and whether it may be used right
 * now. Redis unavailable is not an outage: callers fall back to their in-process counters; the change is
 * logged once each way and shown in the status, readiness and `switchyard_limits_degraded`.
 *
 * What decides it is a probe, not traffic: a PING every REDIS_PROBE_INTERVAL_MS on its own timer, and the
 * connection's own close and ready events. A failing request command degrades it too. While degraded no
 * request tries Redis (none waits for a command timeout against a Redis that is away); the first PING that
 * answers, or the connection becoming ready again, makes it shared again.
 */
export class LimitsRedis {
  private static readonly logger = new Logger('Limits');
  readonly client: Redis | null;
  private degradedSince: Date | null = null;
  private probe: NodeJS.Timeout | null = null;
  private probing = false;
  private closed = false;

  /**
   * What every counter's key starts with: the namespace (SWITCHYARD_REDIS_NAMESPACE) as a Redis Cluster hash tag — one
   * slot for the counters a script touches together — so installations that share a Redis never share a counter.
   * `{switchyard}:` by default, the prefix of every release before the namespace applied here.
   */
  readonly keyTag: string;

  constructor(redisUrl: string | null, nodeId: string, private readonly clock: () => number = Date.now, namespace = 'switchyard') {
    this.keyTag = `{${namespace}}:`;
    if (!redisUrl) {
      this.client = null;
      return;
    }
    // No offline queue and a short command timeout: a request never waits for a Redis that is away.
    this.client = new Redis(redisUrl, {
      enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: REDIS_COMMAND_TIMEOUT_MS, connectionName: `switchyard-limits-${nodeId}`,
      retryStrategy: (times) => Math.min(times * 100, 1_000),
    });
    this.client.on('error', () => undefined); // failures surface per command and through the probe; reconnection is automatic
    this.client.on('ready', () => this.succeeded());
    this.client.on('close', () => {
      if (!this.closed) this.failed('connection closed');
    });
    this.probe = setInterval(() => void this.ping(), REDIS_PROBE_INTERVAL_MS);
    this.probe.unref();
  }

  /** Waits (bounded) for Redis, so the first requests are already shared; never fails. */
  async start(waitMs = 2_000): Promise<void> {
    const client = this.client;
    if (!client || client.status === 'ready') return;
    let timer: NodeJS.Timeout | undefined;
    const ready = await Promise.race([
      new Promise<boolean>((resolve) => client.once('ready', () => resolve(true))),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs))),
    ]);
    clearTimeout(timer);
    if (!ready) this.failed('not reachable at start');
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.probe) clearInterval(this.probe);
    this.probe = null;
    this.client?.disconnect();
  }

  /** Redis is configured (REDIS_URL), answering or not. */
  get configured(): boolean {
    return this.client !== null;
  }

  /** Redis may be tried for this request: configured, connected, and not found away by the probe or a command. */
  usable(): boolean {
    if (!this.client) return false;
    if (this.client.status !== 'ready') {
      this.failed(`connection ${this.client.status}`);
      return false;
    }
    return this.degradedSince === null;
  }

  failed(why: string): void {
    if (this.degradedSince || !this.client) return;
    this.degradedSince = new Date(this.clock());
    LimitsRedis.logger.warn(`Redis unavailable (${why}): rate limits and budgets are counted by this node alone until it returns`);
  }

  succeeded(): void {
    if (!this.degradedSince) return;
    this.degradedSince = null;
    LimitsRedis.logger.log('Redis reachable again: rate limits and budgets are shared by every node again');
  }

  status(): LimitsRedisStatus {
    return {
      backend: this.client && !this.degradedSince ? 'redis' : 'local',
      degraded: this.degradedSince !== null,
      degradedSince: this.degradedSince?.toISOString() ?? null,
    };
  }

  /** One PING (at most one in flight): its answer or its failure decides whether Redis is used. */
  private async ping(): Promise<void> {
    const client = this.client;
    if (!client || this.probing || this.closed) return;
    if (client.status !== 'ready') {
      this.failed(`connection ${client.status}`);
      return;
    }
    this.probing = true;
    try {
      const answer = await client.ping();
      if (this.closed) return;
      if (answer === 'PONG') this.succeeded();
      else this.failed(`unexpected answer to PING`);
    } catch (error) {
      if (!this.closed) this.failed((error as Error).message);
    } finally {
      this.probing = false;
    }
  }
}
