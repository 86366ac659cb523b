import { type Permit, permit } from './permit.js';

/** Queueing for a gate: off (depth 0) unless explicitly enabled, and then bounded in depth and wait. */
export interface GateQueue {
  depth: number;
  maxWaitMs: number;
}

interface Waiter {
  resolve(permit: Permit | null): void;
  timer: NodeJS.Timeout;
}

/**
 * A counting semaphore that fails fast: `tryAcquire` takes a slot or returns null at once. With a
 * queue configured, `acquire` may instead wait — in FIFO order, at most `depth` waiters, each at most
 * `maxWaitMs` — and a released slot passes straight to the oldest waiter. A limit of null is unlimited.
 */
export class ConcurrencyGate {
  private held = 0;
  private readonly waiters: Waiter[] = [];

  constructor(
    private readonly limit: number | null,
    private readonly queue: GateQueue = { depth: 0, maxWaitMs: 0 },
  ) {}

  get inUse(): number {
    return this.held;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  tryAcquire(): Permit | null {
    if (this.limit !== null && this.held >= this.limit) return null;
    this.held++;
    return permit(() => this.releaseOne());
  }

  /** A permit, waiting in the bounded queue when one is configured; null when refused or timed out. */
  acquire(signal?: AbortSignal): Permit | null | Promise<Permit | null> {
    const now = this.tryAcquire();
    if (now || this.queue.depth <= 0 || this.waiters.length >= this.queue.depth || signal?.aborted) return now;
    return new Promise<Permit | null>((resolve) => {
      const waiter: Waiter = {
        resolve: (granted) => {
          clearTimeout(waiter.timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(granted);
        },
        timer: setTimeout(() => this.abandon(waiter), this.queue.maxWaitMs),
      };
      const onAbort = () => this.abandon(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private abandon(waiter: Waiter): void {
    const index = this.waiters.indexOf(waiter);
    if (index < 0) return;
    this.waiters.splice(index, 1);
    waiter.resolve(null);
  }

  private releaseOne(): void {
    const next = this.waiters.shift();
    // Hand the slot over without letting the count dip, so no newcomer can jump the queue.
    if (next) next.resolve(permit(() => this.releaseOne()));
    else this.held--;
  }
}

/**
 * One counter per key (an API key, a tenant, a deployment) with the limit given at each acquisition,
 * so a limit change applies to the next request. Entries disappear when their count returns to zero,
 * so memory follows the active keys, not every key ever seen.
 */
export class KeyedConcurrency {
  private readonly held = new Map<string, number>();

  tryAcquire(key: string, limit: number | null): Permit | null {
    const current = this.held.get(key) ?? 0;
    if (limit !== null && current >= limit) return null;
    this.held.set(key, current + 1);
    return permit(() => {
      const count = (this.held.get(key) ?? 1) - 1;
      if (count <= 0) this.held.delete(key);
      else this.held.set(key, count);
    });
  }

  inUse(key: string): number {
    return this.held.get(key) ?? 0;
  }

  /** Sum over every key: zero when nothing is held anywhere. */
  get total(): number {
    let sum = 0;
    for (const count of this.held.values()) sum += count;
    return sum;
  }
}
