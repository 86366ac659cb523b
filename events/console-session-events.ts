import type { DomainEvent } from './event.js';

/** How a console user proved who they are. */
export type ConsoleSignInMethod = 'token' | 'oidc';

/**
 * Console sign-ins and sign-outs, for the audit trail. They name the user, the role the session got and
 * the method, never a credential: neither the admin token, nor an ID token, nor the session's cookie value
 * (the stream and `sessionRef` use a public id of the session that opens nothing).
 */
export type ConsoleSignedIn = DomainEvent<'ConsoleSignedIn', {
  sessionRef: string;
  user: string;
  role: string;
  method: ConsoleSignInMethod;
  /** When the session ends at the latest, whatever its use (the absolute timeout). */
  expiresAt: string;
}>;

/**
 * A sign-in the console refused. `user` is known when the credential itself was good (an OIDC user without
 * a mapped role); a wrong admin token names nobody. `reason` is a stable code (`invalid_token`, `no_role`,
 * `invalid_id_token`, `invalid_state`, `issuer_error`, `access_denied`); `detail` says which check failed
 * (e.g. `expired`, `claim aud: check failed`), never with the credential.
 */
export type ConsoleSignInRefused = DomainEvent<'ConsoleSignInRefused', {
  user: string | null;
  method: ConsoleSignInMethod;
  reason: string;
  detail: string | null;
  clientAddress: string;
}>;

export type ConsoleSignedOut = DomainEvent<'ConsoleSignedOut', { sessionRef: string; user: string; role: string }>;

export type ConsoleSessionEvent = ConsoleSignedIn | ConsoleSignInRefused | ConsoleSignedOut;
export const CONSOLE_SESSION_EVENT_TYPES = ['ConsoleSignedIn', 'ConsoleSignInRefused', 'ConsoleSignedOut'] as const;

/** One stream per console session: its sign-in and its sign-out. */
export function consoleSessionStream(sessionRef: string): string {
  return `console-session-${sessionRef}`;
}

/** One stream per refused attempt (attempts from many addresses never contend for one stream). */
export function consoleSignInRefusalStream(attemptId: string): string {
  return `console-sign-in-${attemptId}`;
}
