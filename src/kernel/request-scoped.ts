/**
 * Side data for objects that live as long as one request (its response, its headers, its parsed body):
 * kept on the object itself, under a symbol of this table's own, not in a WeakMap.
 *
 * Why not a WeakMap: V8's young-generation collector (the scavenger) cannot tell that a WeakMap's key
 * died, so it keeps the value alive, and everything the value reaches, until the next full collection.
 * A WeakMap keyed by each request's response therefore kept every request's whole object graph alive
 * through every scavenge: under load each scavenge copied and promoted megabytes of finished requests,
 * its pause grew with the time since the last one (5–10 ms every 0.6 s at 300 rps on pg-default), and the
 * old generation filled with them. Measured with the bench's --gateway-survivor-profile and
 * --trace-gc-nvp (bench/PROFILE.md). A property lives and dies with its object, in either generation.
 *
 * The property is not enumerable, so spreading, `Object.keys`, `for…in` and `JSON.stringify` of the object
 * never see it. Keys must be extensible objects (the request path never freezes them).
 */
export class RequestScoped<K extends object, V> {
  private readonly slot: symbol;

  constructor(description: string) {
    this.slot = Symbol(description);
  }

  get(key: K): V | undefined {
    return (key as Record<symbol, V | undefined>)[this.slot];
  }

  set(key: K, value: V): void {
    Object.defineProperty(key, this.slot, { value, writable: true, enumerable: false, configurable: true });
  }
}
