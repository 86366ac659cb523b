import type { ConsoleRole } from './admin-area.js';

/** The console session a request's cookie stands for, as the admin guard needs it. */
export interface AdminSession {
  /** The session's public id (event streams, logs); never the cookie value. */
  sessionRef: string;
  user: string;
  role: ConsoleRole;
  /** The token every change sent with this session must carry in `x-csrf-token`. */
  csrfToken: string;
}

/** The console's session cookie. HttpOnly, so only the browser sends it; no script ever reads it. */
export const CONSOLE_SESSION_COOKIE = 'switchyard_console';

/**
 * What the admin guard needs from the console: the live session behind a cookie value, or null when there
 * is none (unknown, signed out, idle too long or past its absolute end). Finding it counts as use (the
 * idle timeout starts again). A port, so the admin context does not depend on the console (whose
 * controllers depend on admin); the console binds it to its session store.
 */
export abstract class AdminSessions {
  abstract find(cookieValue: string): Promise<AdminSession | null>;
}

/** The value of the console's session cookie in a `Cookie` header, or null. */
export function sessionCookieOf(cookieHeader: string | string[] | undefined): string | null {
  const header = Array.isArray(cookieHeader) ? cookieHeader.join('; ') : cookieHeader;
  if (!header) return null;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator < 0) continue;
    if (part.slice(0, separator).trim() !== CONSOLE_SESSION_COOKIE) continue;
    const value = part.slice(separator + 1).trim();
    // Session ids are base62; anything else is no session of ours.
    return /^[A-Za-z0-9]{20,128}$/.test(value) ? value : null;
  }
  return null;
}
