interface Slot<V> {
  value: V;
  bytes: number;
  expiresAt: number;
}

/**
 * A least-recently-used map bounded by the bytes of what it holds, with an expiry per entry: the
 * in-process home of content (cached answers, idempotent outcomes) when there is no Redis. A Map keeps
 * insertion order, so re-inserting on use makes its first entry the least recently used.
 */
export class ByteBoundedLru<V> {
  private readonly slots = new Map<string, Slot<V>>();
  private held = 0;

  constructor(
    readonly maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Bytes currently held. */
  get bytes(): number {
    return this.held;
  }

  get size(): number {
    return this.slots.size;
  }

  get(key: string): V | undefined {
    const slot = this.slots.get(key);
    if (!slot) return undefined;
    if (slot.expiresAt <= this.now()) {
      this.delete(key);
      return undefined;
    }
    this.slots.delete(key);
    this.slots.set(key, slot);
    return slot.value;
  }

  /** Stores `value` for `ttlMs`; false when it alone is larger than the bound (nothing is evicted then). */
  set(key: string, value: V, bytes: number, ttlMs: number): boolean {
    if (bytes > this.maxBytes) return false;
    this.delete(key);
    for (const oldest of this.slots.keys()) {
      if (this.held + bytes <= this.maxBytes) break;
      this.delete(oldest);
    }
    this.slots.set(key, { value, bytes, expiresAt: this.now() + ttlMs });
    this.held += bytes;
    return true;
  }

  delete(key: string): boolean {
    const slot = this.slots.get(key);
    if (!slot) return false;
    this.slots.delete(key);
    this.held -= slot.bytes;
    return true;
  }

  /** Deletes every live entry `matches` selects (and every expired one on the way); returns how many live ones went. */
  deleteWhere(matches: (key: string, value: V) => boolean): number {
    const now = this.now();
    let deleted = 0;
    for (const [key, slot] of [...this.slots]) {
      if (slot.expiresAt <= now) this.delete(key);
      else if (matches(key, slot.value)) {
        this.delete(key);
        deleted++;
      }
    }
    return deleted;
  }
}
