import type { ConsoleStateStore } from './console-state-store.js';

/** More entries than this and the oldest go first: pending sign-ins and attempt counts need no credential to create. */
const MAX_ENTRIES = 50_000;

interface Entry {
  value: string;
  expiresAt: number;
}

/** The console's state in this process (no REDIS_URL): lost at restart, bounded in count, expired on read. */
export class MemoryConsoleStateStore implements ConsoleStateStore {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  async put(key: string, value: string, ttlMs: number): Promise<void> {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    this.bound();
  }

  async get(key: string): Promise<string | null> {
    return this.live(key)?.value ?? null;
  }

  async take(key: string): Promise<string | null> {
    const entry = this.live(key);
    this.entries.delete(key);
    return entry?.value ?? null;
  }

  async delete(key: string): Promise<void> {
    this.entries.delete(key);
  }

  async hit(key: string, windowMs: number): Promise<{ count: number; resetInMs: number }> {
    const entry = this.live(key);
    if (!entry) {
      await this.put(key, '1', windowMs);
      return { count: 1, resetInMs: windowMs };
    }
    entry.value = String(Number(entry.value) + 1);
    return { count: Number(entry.value), resetInMs: entry.expiresAt - this.now() };
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private bound(): void {
    if (this.entries.size <= MAX_ENTRIES) return;
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
    // Insertion order: the first keys are the oldest.
    for (const key of this.entries.keys()) {
      if (this.entries.size <= MAX_ENTRIES) break;
      this.entries.delete(key);
    }
  }
}
