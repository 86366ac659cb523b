import { AdminApiError } from '../admin/index.js';
import type { ConsoleStateStore } from './console-state-store.js';

const WINDOW_MS = 60_000;

/**
 * Bounds console sign-in attempts per client address (a fixed one-minute window, shared by every node when
 * the state is in Redis), so the admin token cannot be guessed at speed through the console. Every
 * attempt counts, good or bad: the bound must not tell a guesser which of its attempts were right.
 */
export class SignInThrottle {
  constructor(
    private readonly store: ConsoleStateStore,
    private readonly attemptsPerMinute: number,
  ) {}

  /** Counts the attempt, or throws 429 `sign_in_rate_limited` with `retry-after` in seconds. */
  async admit(clientAddress: string): Promise<void> {
    const { count, resetInMs } = await this.store.hit(`sign-in:${clientAddress}`, WINDOW_MS);
    if (count <= this.attemptsPerMinute) return;
    throw new SignInRateLimited(Math.max(1, Math.ceil(resetInMs / 1000)), this.attemptsPerMinute);
  }
}

export class SignInRateLimited extends AdminApiError {
  constructor(readonly retryAfterSeconds: number, limit: number) {
    super(429, 'sign_in_rate_limited', `Too many sign-in attempts from this address (at most ${limit} a minute). Retry in ${retryAfterSeconds} s.`);
  }
}
