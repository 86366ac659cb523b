import type { Redis } from 'ioredis';
import { GatewayError } from '../canonical/index.js';
import { limitSetting } from './limit-setting.js';
import type { LimitsRedis } from './limits-redis.js';
import { NO_PERMIT, type Permit, permit } from './permit.js';

/**
 * One concurrency scope: a key's, a tenant's or an alias's `maxConcurrency` (a request's, refused with
 * 429), or a deployment quota group's (an attempt's, refused by skipping the deployment).
 */
export interface ConcurrencyScope {
  kind: 'key' | 'tenant' | 'alias' | 'quota_group';
  id: string;
  limit: number;
}

/**
 * KEYS: one sorted set per scope (member = request id, score = lease end); ARGV: now, lease end, request
 * id, lease ms, then the limits. Expired leases are dropped, every scope checked, then all or none taken.
 */
const ACQUIRE = `
local now = tonumber(ARGV[1])
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[4 + i]) then return i - 1 end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[4]))
end
return -1
`;

type Scripted = Redis & { switchyardConcurrencyAcquire(...args: Array<string | number>): Promise<number> };

/**
 * Concurrency limits across every node, when Redis is configured: requests per key, tenant and alias
 * (`limits.maxConcurrency`), and calls per deployment quota group. One lease per holder in a sorted set
 * per scope, taken atomically and given back when the holder ends. A node that dies leaves its leases
 * behind only until they expire (the longest a request may live). Without Redis, or while it is away,
 * each node's own count (AdmissionControl, DeploymentConcurrency) is the limit.
 */
export class SharedConcurrency {
  private readonly redis: Scripted | null;

  constructor(private readonly limits: LimitsRedis) {
    this.redis = limits.client as Scripted | null;
    this.redis?.defineCommand('switchyardConcurrencyAcquire', { lua: ACQUIRE });
  }

  /** A permit for every scope, or the 429 naming the scope at its limit; NO_PERMIT when Redis is not in use. */
  async acquire(scopes: readonly ConcurrencyScope[], requestId: string, leaseMs: number): Promise<Permit> {
    const taken = await this.take(scopes, requestId, leaseMs);
    if ('refused' in taken) throw concurrencyLimit(taken.refused);
    return taken;
  }

  /** A permit for every scope, or null when one is at its limit; NO_PERMIT when Redis is not in use. */
  async tryAcquire(scopes: readonly ConcurrencyScope[], holderId: string, leaseMs: number): Promise<Permit | null> {
    const taken = await this.take(scopes, holderId, leaseMs);
    return 'refused' in taken ? null : taken;
  }

  private async take(scopes: readonly ConcurrencyScope[], holderId: string, leaseMs: number): Promise<Permit | { refused: ConcurrencyScope }> {
    if (scopes.length === 0 || !this.redis || !this.limits.usable()) return NO_PERMIT;
    const keys = scopes.map((s) => `${this.limits.keyTag}cc:${s.kind}:${s.id}`);
    const now = Date.now();
    let refused: number;
    try {
      refused = Number(await this.redis.switchyardConcurrencyAcquire(keys.length, ...keys, now, now + leaseMs, holderId, leaseMs, ...scopes.map((s) => s.limit)));
      this.limits.succeeded();
    } catch (error) {
      this.limits.failed((error as Error).message);
      return NO_PERMIT; // the node's own count still applies
    }
    if (refused >= 0) return { refused: scopes[refused] };
    const redis = this.redis;
    return permit(() => {
      const pipeline = redis.multi();
      for (const key of keys) pipeline.zrem(key, holderId);
      pipeline.exec().catch(() => undefined); // an unreleased lease expires on its own
    });
  }
}

const SCOPE_NAMES: Record<ConcurrencyScope['kind'], string> = { key: 'API key', tenant: 'tenant', alias: 'model', quota_group: 'quota group' };

function concurrencyLimit(scope: ConcurrencyScope): GatewayError {
  const setting = limitSetting(scope.kind, scope.id, 'maxConcurrency');
  return new GatewayError(
    429,
    'rate_limited',
    `Too many concurrent requests for this ${SCOPE_NAMES[scope.kind]} across the gateway (limit ${scope.limit}, ${setting}). Retry when one finishes.`,
    null,
    { 'retry-after': '1' },
    { scope: `${scope.kind}.maxConcurrency`, setting },
  );
}
