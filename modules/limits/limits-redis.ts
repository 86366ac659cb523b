import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';

/** Where the limits' counters are right now, for /admin/v1/status. */
export interface LimitsRedisStatus {
  /** `redis`: one counter per scope shared by every node; `local`: counted by this node alone. */
  backend: 'redis' | 'local';
  /** Redis is configured but unreachable: this node counts alone until it returns. */
  degraded: boolean;
  degradedSince: string | null;
}

/**
 * The Redis connection of rate limits and budgets, and whether it can be used right now. Redis
 * unreachable is not an outage: callers fall back to their in-process counters; the change is logged
 * once each way and shown in the status, and Redis is used again as soon as it answers.
 */
export class LimitsRedis {
  private static readonly logger = new Logger('Limits');
  readonly client: Redis | null;
  private degradedSince: Date | null = null;

  constructor(redisUrl: string | null, nodeId: string, private readonly clock: () => number = Date.now) {
    if (!redisUrl) {
      this.client = null;
      return;
    }
    // No offline queue and a short command timeout: a request never waits for a Redis that is away.
    this.client = new Redis(redisUrl, {
      enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500, connectionName: `switchyard-limits-${nodeId}`,
      retryStrategy: (times) => Math.min(times * 100, 1_000),
    });
    this.client.on('error', () => undefined); // failures surface per command; reconnection is automatic
    this.client.on('ready', () => this.succeeded());
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
    this.client?.disconnect();
  }

  /** Redis may be tried for this request (configured and connected). */
  usable(): boolean {
    if (!this.client) return false;
    if (this.client.status === 'ready') return true;
    this.failed(`connection ${this.client.status}`);
    return false;
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
}
