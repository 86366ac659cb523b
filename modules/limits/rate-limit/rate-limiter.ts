import { GatewayError } from '../../canonical/index.js';
import { RATE_FIELDS, limitSetting } from '../limit-setting.js';
import type { LimitsRedis } from '../limits-redis.js';
import { LocalWindowStore } from './local-window-store.js';
import { RedisWindowStore } from './redis-window-store.js';
import { duration, rateLimitHeaders, retryAfterHeaders } from './rate-limit-headers.js';
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

const NOTHING: RateReservation = Object.freeze({ headers: {}, settle: () => undefined, cancel: () => undefined });

/**
 * Per-minute rate limits (requests, tokens, input tokens, output tokens) for every scope of a request,
 * counted in one authoritative place: Redis when REDIS_URL is set (one atomic script per request, so
 * nodes share each counter exactly), this process otherwise. Reserve at admission with the estimate
 * RequestAdmitted records; settle with actual usage. Nothing admitted is ever cut.
 * While Redis is away (LimitsRedis) the node counts in process: each node then applies the limits on its own.
 */
export class RateLimiter {
  private readonly local = new LocalWindowStore();
  private readonly shared: RedisWindowStore | null;

  constructor(private readonly redis: LimitsRedis, private readonly clock: () => number = Date.now) {
    // A hash tag keeps every counter in one Redis Cluster slot: the script touches several at once.
    this.shared = redis.client ? new RedisWindowStore(redis.client, `${redis.keyTag}rl:`) : null;
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
    let store: WindowStore = this.shared && this.redis.usable() ? this.shared : this.local;
    let decision;
    try {
      decision = await store.charge(charges, now);
      if (store === this.shared) this.redis.succeeded();
    } catch (error) {
      this.redis.failed((error as Error).message);
      store = this.local;
      decision = this.local.chargeNow(charges, now);
    }
    if (!decision.admitted) {
      const refused = { index: decision.refused, retryAtMs: decision.retryAtMs };
      throw exhausted(charges[decision.refused], Math.max(0, decision.retryAtMs - now), rateLimitHeaders(charges, decision.readings, now, refused));
    }
    const headers = rateLimitHeaders(charges, decision.readings, now);
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

}

const SCOPE_NAMES = { key: 'API key', tenant: 'tenant', alias: 'alias', quota_group: 'deployment quota group' } as const;
/** The scope as the 429's message names it: by its id, or by what it is shown as (never a deployment's id). */
function scopeName(scope: RateScope): string {
  return scope.shownAs === undefined ? `${SCOPE_NAMES[scope.kind]} '${scope.id}'` : `the provider quota of route '${scope.shownAs}'`;
}

/** The setting that limits this counter (`apiKeys[app].limits.rpm` …). */
function settingOf(charge: ScopedCharge): string {
  return limitSetting(charge.scope.kind, charge.scope.id, RATE_FIELDS[charge.dimension], charge.scope.shownAs);
}

const UNITS = { requests: 'requests', tokens: 'tokens', input_tokens: 'input tokens', output_tokens: 'output tokens' } as const;

/** The 429 of an exhausted counter: its message, `retry-after(-ms)` and `x-ratelimit-reset-*` all count to one instant. */
function exhausted(charge: ScopedCharge, retryInMs: number, headers: Record<string, string>): GatewayError {
  return new GatewayError(
    429,
    'rate_limited',
    `Rate limit reached for ${scopeName(charge.scope)}: ${charge.limit} ${UNITS[charge.dimension]} per minute (${settingOf(charge)}). Retry in ${duration(retryInMs)}.`,
    null,
    Object.assign({}, headers, retryAfterHeaders(retryInMs)),
    { scope: `${charge.scope.kind}:${charge.scope.shownAs ?? charge.scope.id}`, limit_type: charge.dimension, setting: settingOf(charge) },
  );
}

/** A request larger than a limit: refused whatever the window holds, so with no `retry-after`. */
function neverFits(charge: ScopedCharge): GatewayError {
  return new GatewayError(
    429,
    'rate_limited',
    `This request needs ${charge.cost} ${UNITS[charge.dimension]}, more than the ${charge.limit} per minute allowed for ${scopeName(charge.scope)} (${settingOf(charge)}). Lower max_tokens or the input.`,
    null,
    // No retry-after: the gateway refuses this request as long as the limit stands, so no wait would help.
    {},
    { scope: `${charge.scope.kind}:${charge.scope.shownAs ?? charge.scope.id}`, limit_type: charge.dimension, setting: settingOf(charge) },
  );
}
