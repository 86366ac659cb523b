import { GatewayError } from '../canonical/index.js';
import type { Principal } from '../../projections/key-index/index.js';
import { ADMISSION_ENVIRONMENT, type AdmissionSettings } from './admission-settings.js';
import { ConcurrencyGate, KeyedConcurrency } from './concurrency-gate.js';
import { limitSetting } from './limit-setting.js';
import { type Permit, permits } from './permit.js';

/** What the permits in use add up to (all zero when the node is idle). */
export interface AdmissionLoad {
  requests: number;
  streams: number;
  keys: number;
  tenants: number;
  aliases: number;
  queued: number;
}

/**
 * Concurrency admission (DESIGN §6, issue 5 §8): per-key and per-tenant limits first (a caller over
 * its own limit gets 429 and takes no global capacity), then the node's request limit and, for
 * streams, its stream limit (503 overloaded); the alias's limit (429) once the serving alias is known. Fail fast by default; the returned permit releases every
 * slot at once and is idempotent, so the pipeline releases it on every path.
 */
export class AdmissionControl {
  private readonly keys = new KeyedConcurrency();
  private readonly tenants = new KeyedConcurrency();
  private readonly aliases = new KeyedConcurrency();
  private readonly requests: ConcurrencyGate;
  private readonly streams: ConcurrencyGate;

  constructor(settings: AdmissionSettings) {
    const queue = { depth: settings.queueDepth, maxWaitMs: settings.queueWaitMs };
    this.requests = new ConcurrencyGate(settings.maxConcurrentRequests, queue);
    this.streams = new ConcurrencyGate(settings.maxConcurrentStreams, queue);
  }

  /** A permit for one request, or a GatewayError (429 for the caller's own limits, 503 when the node is full). */
  async admit(principal: Principal, stream: boolean, signal?: AbortSignal): Promise<Permit> {
    const held: Permit[] = [];
    try {
      const key = this.keys.tryAcquire(principal.keyId, principal.limits.maxConcurrency);
      if (!key) throw callerLimit('key', principal.keyId, principal.limits.maxConcurrency!);
      held.push(key);
      const tenant = this.tenants.tryAcquire(principal.tenantId, principal.tenant.limits.maxConcurrency);
      if (!tenant) throw callerLimit('tenant', principal.tenantId, principal.tenant.limits.maxConcurrency!);
      held.push(tenant);
      const request = await this.requests.acquire(signal);
      if (!request) throw overloaded('requests');
      held.push(request);
      if (stream) {
        const slot = await this.streams.acquire(signal);
        if (!slot) throw overloaded('streams');
        held.push(slot);
      }
      return permits(held);
    } catch (error) {
      permits(held).release();
      throw error;
    }
  }

  /**
   * A permit for one request of an alias limited to `limit` concurrent requests (null: none), or its 429.
   * Taken apart from `admit` because the alias a request is served by is only final after its budget
   * check (a budget downgrade serves it through another alias, whose limit is the one that applies).
   */
  admitAlias(alias: string, limit: number | null): Permit {
    const held = this.aliases.tryAcquire(alias, limit);
    if (!held) throw callerLimit('alias', alias, limit!);
    return held;
  }

  load(): AdmissionLoad {
    return {
      requests: this.requests.inUse,
      streams: this.streams.inUse,
      keys: this.keys.total,
      tenants: this.tenants.total,
      aliases: this.aliases.total,
      queued: this.requests.waiting + this.streams.waiting,
    };
  }
}

const CALLER_SCOPES = { key: 'API key', tenant: 'tenant', alias: 'model' } as const;

function callerLimit(scope: keyof typeof CALLER_SCOPES, id: string, limit: number): GatewayError {
  const setting = limitSetting(scope, id, 'maxConcurrency');
  return new GatewayError(
    429,
    'rate_limited',
    `Too many concurrent requests for this ${CALLER_SCOPES[scope]} (limit ${limit}, ${setting}). Retry when one finishes.`,
    null,
    { 'retry-after': '1' },
    { scope: `${scope}.maxConcurrency`, setting },
  );
}

/** The node-wide setting each gate is sized by. */
const NODE_SETTINGS = {
  requests: ADMISSION_ENVIRONMENT.SWITCHYARD_MAX_CONCURRENT_REQUESTS.name,
  streams: ADMISSION_ENVIRONMENT.SWITCHYARD_MAX_CONCURRENT_STREAMS.name,
} as const;

function overloaded(what: 'requests' | 'streams'): GatewayError {
  return new GatewayError(
    503,
    'overloaded',
    `The gateway is at its limit of concurrent ${what} (${NODE_SETTINGS[what]}). Retry shortly.`,
    null,
    { 'retry-after': '1' },
    { setting: NODE_SETTINGS[what] },
  );
}
