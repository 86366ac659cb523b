import type { ScopedCharge } from './rate-limit-scopes.js';
import type { CounterReading } from './rate-window.js';

/**
 * OpenAI's rate-limit headers, from the tightest counter of each kind: `-requests` from the request
 * counters, `-tokens` from the token counters (total, else input, else output). `reset` is the time
 * until the oldest usage in that counter's window expires, i.e. when capacity starts to come back,
 * written like OpenAI's ("1s", "250ms", "1m0s"). Scopes without limits add nothing.
 */
export function rateLimitHeaders(charges: readonly ScopedCharge[], readings: readonly CounterReading[], nowMs: number): Record<string, string> {
  const headers: Record<string, string> = {};
  const tightest = (dimensions: readonly string[]) => {
    let best: { limit: number; remaining: number; releasesAt: number | null } | null = null;
    for (const dimension of dimensions) {
      for (const [i, charge] of charges.entries()) {
        if (charge.dimension !== dimension) continue;
        const remaining = Math.max(0, charge.limit - readings[i].used);
        if (!best || remaining < best.remaining) best = { limit: charge.limit, remaining, releasesAt: readings[i].releasesAt };
      }
      if (best) return best;
    }
    return best;
  };
  for (const [suffix, dimensions] of [['requests', ['requests']], ['tokens', ['tokens', 'input_tokens', 'output_tokens']]] as const) {
    const counter = tightest(dimensions);
    if (!counter) continue;
    headers[`x-ratelimit-limit-${suffix}`] = String(counter.limit);
    headers[`x-ratelimit-remaining-${suffix}`] = String(counter.remaining);
    headers[`x-ratelimit-reset-${suffix}`] = duration(counter.releasesAt === null ? 0 : Math.max(0, counter.releasesAt - nowMs));
  }
  return headers;
}

/** 250 → "250ms", 1000 → "1s", 61500 → "1m1.5s". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms - minutes * 60_000) / 100) / 10;
  return minutes > 0 ? `${minutes}m${seconds}s` : `${seconds}s`;
}
