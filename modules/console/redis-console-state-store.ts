import { Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AdminApiError } from '../admin/index.js';
import type { ConsoleStateStore } from './console-state-store.js';

/** INCR, and the window's expiry on its first hit; answers the count and the milliseconds left. */
const HIT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { count, redis.call('PTTL', KEYS[1]) }`;

/**
 * The console's state in Redis, shared by every node; Redis expires each entry itself. Redis out of reach
 * is a 503 `session_store_unavailable` (sign-in and session-cookie requests cannot be judged without it),
 * never a session taken for valid.
 */
export class RedisConsoleStateStore implements ConsoleStateStore {
  constructor(
    private readonly redis: Redis,
    private readonly namespace: string,
  ) {}

  put(key: string, value: string, ttlMs: number): Promise<void> {
    return reachable(async () => void (await this.redis.set(this.keyOf(key), value, 'PX', Math.max(1, Math.ceil(ttlMs)))));
  }

  get(key: string): Promise<string | null> {
    return reachable(() => this.redis.get(this.keyOf(key)));
  }

  take(key: string): Promise<string | null> {
    return reachable(() => this.redis.getdel(this.keyOf(key)));
  }

  delete(key: string): Promise<void> {
    return reachable(async () => void (await this.redis.del(this.keyOf(key))));
  }

  hit(key: string, windowMs: number): Promise<{ count: number; resetInMs: number }> {
    return reachable(async () => {
      const [count, ttl] = (await this.redis.eval(HIT, 1, this.keyOf(key), Math.max(1, Math.ceil(windowMs)))) as [number, number];
      return { count, resetInMs: ttl > 0 ? ttl : windowMs };
    });
  }

  private keyOf(key: string): string {
    return `${this.namespace}:console:${key}`;
  }
}

const logger = new Logger('Console');

async function reachable<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    // The cause goes to the log only: the answer tells a browser nothing about where Redis is.
    logger.warn(`session store unavailable: ${(error as Error).message}`);
    throw new AdminApiError(503, 'session_store_unavailable', 'The console\'s session store cannot be reached; nothing was changed. Retry in a moment.');
  }
}
