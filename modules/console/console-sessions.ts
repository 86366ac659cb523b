import { createHash } from 'node:crypto';
import type { ConsoleSignInMethod } from '../../events/index.js';
import { type AdminSession, AdminSessions, type ConsoleRole } from '../admin/index.js';
import { randomBase62, uuidv7 } from '../../src/kernel/index.js';
import type { ConsoleStateStore } from './console-state-store.js';

/** A session as the store keeps it (under the hash of its cookie value, never the value itself). */
interface StoredSession {
  sessionRef: string;
  user: string;
  role: ConsoleRole;
  method: ConsoleSignInMethod;
  csrfToken: string;
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number;
}

/** A live session, as sign-in and the session API answer it. */
export interface ConsoleSession extends AdminSession {
  method: ConsoleSignInMethod;
  /** When it ends unless used before. */
  idleExpiresAt: Date;
  /** When it ends whatever its use. */
  expiresAt: Date;
}

/** A new session and the cookie value that opens it (shown to the browser once, in Set-Cookie). */
export interface OpenedSession {
  cookieValue: string;
  session: ConsoleSession;
}

/**
 * Server-side console sessions. The cookie carries only an opaque random id (256 bits); everything else
 * (user, role, CSRF token, timestamps) stays in the store, keyed by the id's SHA-256, so whoever reads the
 * store learns no cookie. Each use moves the idle deadline; neither use nor anything else moves the
 * absolute one. Both are checked on every read, whatever the store's own expiry does.
 */
export class ConsoleSessions extends AdminSessions {
  constructor(
    private readonly store: ConsoleStateStore,
    private readonly timeouts: { idleTimeoutMs: number; maxAgeMs: number },
    private readonly now: () => number = Date.now,
  ) {
    super();
  }

  async open(user: string, role: ConsoleRole, method: ConsoleSignInMethod): Promise<OpenedSession> {
    const cookieValue = randomBase62(43);
    const now = this.now();
    const stored: StoredSession = {
      sessionRef: uuidv7(now), user, role, method, csrfToken: randomBase62(43), createdAt: now, lastUsedAt: now, expiresAt: now + this.timeouts.maxAgeMs,
    };
    await this.save(cookieValue, stored);
    return { cookieValue, session: this.view(stored) };
  }

  /** The live session behind a cookie value, its idle deadline moved; null when there is none. */
  async find(cookieValue: string): Promise<ConsoleSession | null> {
    const key = keyOf(cookieValue);
    const text = await this.store.get(key);
    if (text === null) return null;
    const stored = JSON.parse(text) as StoredSession;
    const now = this.now();
    if (now >= stored.expiresAt || now >= stored.lastUsedAt + this.timeouts.idleTimeoutMs) {
      await this.store.delete(key);
      return null;
    }
    stored.lastUsedAt = now;
    await this.save(cookieValue, stored);
    return this.view(stored);
  }

  /** Ends the session server-side: the cookie opens nothing any more, on any node. */
  async close(cookieValue: string): Promise<void> {
    await this.store.delete(keyOf(cookieValue));
  }

  private async save(cookieValue: string, stored: StoredSession): Promise<void> {
    const ttl = Math.min(stored.lastUsedAt + this.timeouts.idleTimeoutMs, stored.expiresAt) - this.now();
    await this.store.put(keyOf(cookieValue), JSON.stringify(stored), Math.max(1, ttl));
  }

  private view(stored: StoredSession): ConsoleSession {
    return {
      sessionRef: stored.sessionRef,
      user: stored.user,
      role: stored.role,
      method: stored.method,
      csrfToken: stored.csrfToken,
      idleExpiresAt: new Date(Math.min(stored.lastUsedAt + this.timeouts.idleTimeoutMs, stored.expiresAt)),
      expiresAt: new Date(stored.expiresAt),
    };
  }
}

function keyOf(cookieValue: string): string {
  return `session:${createHash('sha256').update(cookieValue, 'utf8').digest('hex')}`;
}
