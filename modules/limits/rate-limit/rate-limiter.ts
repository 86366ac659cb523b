import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { GatewayError } from '../../canonical/gateway-error.js';
import { LocalWindowStore } from './local-window-store.js';
import { RedisWindowStore } from './redis-window-store.js';
import { duration, rateLimitHeaders } from './rate-limit-headers.js';
import { type RateScope, type RateUsage, type ScopedCharge, chargesFor, costOf } from './rate-limit-scopes.js';
import type { WindowStore } from './rate-window.js';

/** A request's share of its per-minute limits; `settle` replaces the estimate by actual usage, once. */
export interface RateReservation {
  /** `x-ratelimit-*` for the response (empty when no scope is limited). */
  readonly headers: Record<string, string>;
  settle(actual: RateUsage): void;
  /** Gives everything back (the request was refused later in admission). */
  cancel(): void;
}

/** Where the counters are right now, for /admin/v1/status. */
export interface RateLimitStatus {
  /** `redis`: one counter per scope shared by every node; `local`: counted by this node alone. */
  backend: 'redis' | 'local';
  /** Redis is configured but unreachable: this node counts alone until it returns. */
  degraded: boolean;
  degradedSince: string | null;
}

const NOTHING: RateReservation = Object.freeze({ headers: {}, settle: () => undefined, cancel: () => undefined });

/**
 * Per-minute rate limits (requests, tokens, input tokens, output tokens) for every scope of a request,
 * counted in one authoritative place: Redis when REDIS_URL is set (one atomic script per request, so
 * nodes share each counter exactly), this process otherwise. Reserve at admission with the estimate
 * RequestAdmitted records; settle with actual usage. Nothing admitted is ever cut.
 *
 * Redis unreachable is not an outage: the node counts in process (each node then applies the limits on
 * its own), says so once in the log and in its status, and goes back to Redis as soon as it answers.
 */
export class RateLimiter {
  private static readonly logger = new Logger('RateLimits');
  private readonly local = new LocalWindowStore();
  private readonly redis: Redis | null;
  private readonly shared: RedisWindowStore | null;
  private degradedSince: Date | null = null;

  constructor(redisUrl: string | null, nodeId: string, private readonly clock: () => number = Date.now) {
    if (!redisUrl) {
      this.redis = null;
      this.shared = null;
      return;
    }
    // No offline queue and a short command timeout: a request never waits for a Redis that is away.
    this.redis = new Redis(redisUrl, {
      enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500, connectionName: `switchyard-limits-${nodeId}`,
      retryStrategy: (times) => Math.min(times * 100, 1_000),
    });
    this.redis.on('error', () => undefined); // failures surface per command; reconnection is automatic
    this.redis.on('ready', () => this.recovered());
    // A hash tag keeps every counter in one Redis Cluster slot: the script touches several at once.
    this.shared = new RedisWindowStore(this.redis, '{switchyard}:rl:');
  }

  /** Waits (bounded) for Redis, so the first requests are already shared; never fails. */
  async start(waitMs = 2_000): Promise<void> {
    const redis = this.redis;
    if (!redis || redis.status === 'ready') return;
    let timer: NodeJS.Timeout | undefined;
    const ready = await Promise.race([
      new Promise<boolean>((resolve) => redis.once('ready', () => resolve(true))),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs))),
    ]);
    clearTimeout(timer);
    if (!ready) this.degrade('not reachable at start');
  }

  async close(): Promise<void> {
    this.redis?.disconnect();
  }

  status(): RateLimitStatus {
    return {
      backend: this.shared && !this.degradedSince ? 'redis' : 'local',
      degraded: this.degradedSince !== null,
      degradedSince: this.degradedSince?.toISOString() ?? null,
    };
  }

  /**
   * Reserves `usage` in every limited counter of `scopes`, or throws the 429 naming the exhausted scope
   * (nothing is charged then).
   */
  async reserve(scopes: readonly RateScope[], usage: RateUsage): Promise<RateReservation> {
    const charges = chargesFor(scopes, usage);
    if (charges.length === 0) return NOTHING;
    const tooLarge = charges.find((c) => c.cost > c.limit);
    if (tooLarge) throw neverFits(tooLarge);
    const now = this.clock();
    let store: WindowStore = this.storeNow();
    let decision;
    try {
      decision = await store.charge(charges, now);
      if (store === this.shared) this.recovered();
    } catch (error) {
      this.degrade((error as Error).message);
      store = this.local;
      decision = this.local.chargeNow(charges, now);
    }
    const headers = rateLimitHeaders(charges, decision.readings, now);
    if (!decision.admitted) throw exhausted(charges[decision.refused], Math.max(0, decision.retryAtMs - now), headers);
    const slot = decision.slot;
    let open = true;
    const correct = (actual: RateUsage) => {
      if (!open) return;
      open = false;
      const deltas = charges.map((c) => ({ key: c.key, delta: costOf(c.dimension, actual) - c.cost }));
      store.adjust(slot, deltas, this.clock()).catch(() => undefined); // an unsettled estimate only errs on the safe side
    };
    return { headers, settle: correct, cancel: () => correct({ requests: 0, inputTokens: 0, outputTokens: 0 }) };
  }

  private storeNow(): WindowStore {
    if (!this.shared || !this.redis) return this.local;
    if (this.redis.status !== 'ready') {
      this.degrade(`connection ${this.redis.status}`);
      return this.local;
    }
    return this.shared;
  }

  private degrade(why: string): void {
    if (this.degradedSince || !this.redis) return;
    this.degradedSince = new Date(this.clock());
    RateLimiter.logger.warn(`Redis unavailable (${why}): rate limits are counted by this node alone until it returns`);
  }

  private recovered(): void {
    if (!this.degradedSince) return;
    this.degradedSince = null;
    RateLimiter.logger.log('Redis reachable again: rate limits are shared by every node again');
  }
}

const SCOPE_NAMES = { key: 'API key', tenant: 'tenant', alias: 'alias', quota_group: 'deployment quota group' } as const;
const UNITS = { requests: 'requests', tokens: 'tokens', input_tokens: 'input tokens', output_tokens: 'output tokens' } as const;

function exhausted(charge: ScopedCharge, retryInMs: number, headers: Record<string, string>): GatewayError {
  const seconds = Math.max(1, Math.ceil(retryInMs / 1000));
  return new GatewayError(
    429,
    'rate_limited',
    `Rate limit reached for ${SCOPE_NAMES[charge.scope.kind]} '${charge.scope.id}': ${charge.limit} ${UNITS[charge.dimension]} per minute. Retry in ${duration(retryInMs)}.`,
    null,
    { ...headers, 'retry-after': String(seconds), 'retry-after-ms': String(Math.ceil(retryInMs)) },
    { scope: `${charge.scope.kind}:${charge.scope.id}`, limit_type: charge.dimension },
  );
}

function neverFits(charge: ScopedCharge): GatewayError {
  return new GatewayError(
    429,
    'rate_limited',
    `This request needs ${charge.cost} ${UNITS[charge.dimension]}, more than the ${charge.limit} per minute allowed for ${SCOPE_NAMES[charge.scope.kind]} '${charge.scope.id}'. Lower max_tokens or the input.`,
    null,
    { 'retry-after': '60' },
    { scope: `${charge.scope.kind}:${charge.scope.id}`, limit_type: charge.dimension },
  );
}
