import type { AliasRateLimits, TenantLimits } from '../../../events/index.js';
import type { CounterCharge } from './rate-window.js';

/** What a request uses of each per-minute limit: estimated at admission, actual at settlement. */
export interface RateUsage {
  requests: number;
  inputTokens: number;
  outputTokens: number;
}

export type RateDimension = 'requests' | 'tokens' | 'input_tokens' | 'output_tokens';

/** A scope's per-minute limits; absent or null = not limited in that dimension. */
export type ScopeLimits = Pick<TenantLimits, 'rpm' | 'tpm' | 'inputTpm' | 'outputTpm'> | AliasRateLimits;

/** One scope a request counts against: the key, its tenant, the alias, the deployment's quota group. */
export interface RateScope {
  /** Named in the 429 (`key`, `tenant`, `alias`, `quota_group`). */
  kind: 'key' | 'tenant' | 'alias' | 'quota_group';
  id: string;
  limits: ScopeLimits;
  /**
   * What a client is told the scope is, when its id must not reach them: a deployment's own provider quota
   * (no named quota group) is counted under the deployment's id and shown as its route (`alias#n`).
   */
  shownAs?: string;
}

/** One counter of one scope in one dimension. */
export interface ScopedCharge extends CounterCharge {
  scope: RateScope;
  dimension: RateDimension;
}

const DIMENSIONS: ReadonlyArray<[RateDimension, keyof ScopeLimits]> = [
  ['requests', 'rpm'], ['tokens', 'tpm'], ['input_tokens', 'inputTpm'], ['output_tokens', 'outputTpm'],
];

export function costOf(dimension: RateDimension, usage: RateUsage): number {
  switch (dimension) {
    case 'requests':
      return usage.requests;
    case 'tokens':
      return usage.inputTokens + usage.outputTokens;
    case 'input_tokens':
      return usage.inputTokens;
    case 'output_tokens':
      return usage.outputTokens;
  }
}

/** Every limited (scope, dimension) of a request, with what the reservation costs in it. */
export function chargesFor(scopes: readonly RateScope[], usage: RateUsage): ScopedCharge[] {
  const charges: ScopedCharge[] = [];
  for (const scope of scopes) {
    for (const [dimension, field] of DIMENSIONS) {
      const limit = (scope.limits as Record<string, number | null | undefined>)[field];
      if (limit === null || limit === undefined) continue;
      charges.push({ key: `${scope.kind}:${scope.id}:${dimension}`, limit, cost: costOf(dimension, usage), scope, dimension });
    }
  }
  return charges;
}
