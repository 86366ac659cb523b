import type { ScopedCharge } from './rate-limit-scopes.js';
import type { CounterReading } from './rate-window.js';

/** The counter that refused a request, and when enough of its window has expired for the request to fit (epoch ms). */
export interface RefusedCounter {
  index: number;
  retryAtMs: number;
}

const FAMILIES = [['requests', ['requests']], ['tokens', ['tokens', 'input_tokens', 'output_tokens']]] as const;

/**
 * OpenAI's rate-limit headers, from the tightest counter of each kind: `-requests` from the request
 * counters, `-tokens` from the token counters (total, else input, else output). `reset` is the time
 * until the oldest usage in that counter's window expires, i.e. when capacity starts to come back.
 * On a refusal the kind of the counter that refused is shown by that counter, and its `reset` is when
 * the refused request would fit — the very instant `retry-after` and `retry-after-ms` count to, so the
 * three headers always agree (each rounded up: see `duration` and `retryAfterHeaders`). Scopes without
 * limits add nothing.
 */
export function rateLimitHeaders(
  charges: readonly ScopedCharge[],
  readings: readonly CounterReading[],
  nowMs: number,
  refused: RefusedCounter | null = null,
): Record<string, string> {
  const headers: Record<string, string> = {};
  const tightest = (dimensions: readonly string[]) => {
    let best: { limit: number; remaining: number; resetAt: number | null } | null = null;
    for (const dimension of dimensions) {
      for (const [i, charge] of charges.entries()) {
        if (charge.dimension !== dimension) continue;
        const remaining = Math.max(0, charge.limit - readings[i].used);
        if (!best || remaining < best.remaining) best = { limit: charge.limit, remaining, resetAt: readings[i].releasesAt };
      }
      if (best) return best;
    }
    return best;
  };
  for (const [suffix, dimensions] of FAMILIES) {
    const refusedHere = refused !== null && (dimensions as readonly string[]).includes(charges[refused.index].dimension);
    const counter = refusedHere
      ? {
        limit: charges[refused.index].limit,
        remaining: Math.max(0, charges[refused.index].limit - readings[refused.index].used),
        resetAt: refused.retryAtMs,
      }
      : tightest(dimensions);
    if (!counter) continue;
    headers[`x-ratelimit-limit-${suffix}`] = String(counter.limit);
    headers[`x-ratelimit-remaining-${suffix}`] = String(counter.remaining);
    headers[`x-ratelimit-reset-${suffix}`] = duration(counter.resetAt === null ? 0 : Math.max(0, counter.resetAt - nowMs));
  }
  return headers;
}

/**
 * `retry-after` (whole seconds, at least 1) and `retry-after-ms` for a wait of `ms`: both rounded up, so
 * neither is ever earlier than the moment counted to, and `retry-after` is `x-ratelimit-reset-*` rounded
 * up to the second ("53.2s" → 54, "250ms" → 1).
 */
export function retryAfterHeaders(ms: number): { 'retry-after': string; 'retry-after-ms': string } {
  const exact = Math.max(0, Math.ceil(ms));
  return { 'retry-after': String(Math.max(1, Math.ceil(exact / 1000))), 'retry-after-ms': String(exact) };
}

/**
 * OpenAI's way of writing a duration, rounded up (never earlier than the moment it counts to): below a
 * second to the millisecond, above it to the tenth of a second. 250 → "250ms", 1000 → "1s",
 * 53_040 → "53.1s", 61_500 → "1m1.5s".
 */
export function duration(ms: number): string {
  const exact = Math.max(0, Math.ceil(ms));
  if (exact < 1000) return `${exact}ms`;
  const tenths = Math.ceil(exact / 100);
  const minutes = Math.floor(tenths / 600);
  const seconds = (tenths - minutes * 600) / 10;
  return minutes > 0 ? `${minutes}m${seconds}s` : `${seconds}s`;
}
