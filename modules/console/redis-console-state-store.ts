import type { Redis } from 'ioredis';
import type { ConsoleStateStore } from './console-state-store.js';

/** INCR, and the window's expiry on its first hit; answers the count and the milliseconds left. */
const HIT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { count, redis.call('PTTL', KEYS[1]) }`;

/** The console's state in Redis, shared by every node; Redis expires each entry itself. */
export class RedisConsoleStateStore implements ConsoleStateStore {
  constructor(
    private readonly redis: Redis,
    private readonly namespace: string,
  ) {}

  async put(key: string, value: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.keyOf(key), value, 'PX', Math.max(1, Math.ceil(ttlMs)));
  }

  async get(key: string): Promise<string | null> {
    return this.redis.get(this.keyOf(key));
  }

  async take(key: string): Promise<string | null> {
    return this.redis.getdel(this.keyOf(key));
  }

  async delete(key: string): Promise<void> {
    await this.redis.del(this.keyOf(key));
  }

  async hit(key: string, windowMs: number): Promise<{ count: number; resetInMs: number }> {
    const [count, ttl] = (await this.redis.eval(HIT, 1, this.keyOf(key), Math.max(1, Math.ceil(windowMs)))) as [number, number];
    return { count, resetInMs: ttl > 0 ? ttl : windowMs };
  }

  private keyOf(key: string): string {
    return `${this.namespace}:console:${key}`;
  }
}
