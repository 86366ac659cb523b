/**
 * Where the console keeps what must outlive one request but is no event: sessions, pending OIDC sign-ins
 * and sign-in attempt counts. Every entry expires. In Redis (REDIS_URL) every node shares them, so a
 * session opened on one node works on the others; in this process's memory otherwise, so an embedded
 * single node's sessions end when it restarts.
 */
export interface ConsoleStateStore {
  put(key: string, value: string, ttlMs: number): Promise<void>;
  get(key: string): Promise<string | null>;
  /** Reads and deletes in one step: a second `take` of the same key finds nothing (one-time OIDC state). */
  take(key: string): Promise<string | null>;
  delete(key: string): Promise<void>;
  /**
   * Counts one more hit in the fixed window that started with the key's first hit; returns the count so far
   * and how long until the window ends.
   */
  hit(key: string, windowMs: number): Promise<{ count: number; resetInMs: number }>;
}
