import { Controller, Get, Inject, Optional, Query, Req, Res, UseFilters } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminApiError, AdminExceptionFilter } from '../../admin/index.js';
import { sameHash } from '../../../src/kernel/index.js';
import { OIDC_BINDING_COOKIE, clearOidcBindingCookie, cookieOf, secureCookies, setOidcBindingCookie, setSessionCookie } from '../console-cookies.js';
import { ConsoleJournal } from '../console-journal.js';
import { admitAttempt, closePrevious } from '../console-session.controller.js';
import { CONSOLE_SETTINGS, type ConsoleSettings, type OidcSettings } from '../console-settings.js';
import { ConsoleSessions } from '../console-sessions.js';
import { CONSOLE_STATE_STORE } from '../console-tokens.js';
import type { ConsoleStateStore } from '../console-state-store.js';
import { SignInThrottle } from '../sign-in-throttle.js';
import { roleFromClaim } from './oidc-role-map.js';
import { OidcRelyingParty, OidcSignInError, type PendingOidcSignIn } from './oidc-relying-party.js';

/** How long the browser has to come back from the issuer. */
const PENDING_TTL_SECONDS = 600;

interface StoredPending extends PendingOidcSignIn {
  /** SHA-256 of the binding cookie's value: only the browser that started the sign-in can finish it. */
  bindingHash: string;
}

/**
 * Single sign-on for the console: `start` sends the browser to the issuer (code + PKCE S256, state, nonce),
 * `callback` takes it back, verifies the ID token, maps its role claim to a console role and opens a
 * session. Every refusal goes back to `/console/?signInError=<code>` and is an event; nothing in the URL,
 * the event or the log carries a token.
 */
@Controller('console/api/oidc')
@UseFilters(AdminExceptionFilter)
export class ConsoleOidcController {
  constructor(
    @Inject(CONSOLE_SETTINGS) private readonly settings: ConsoleSettings,
    @Inject(CONSOLE_STATE_STORE) private readonly store: ConsoleStateStore,
    private readonly sessions: ConsoleSessions,
    private readonly throttle: SignInThrottle,
    private readonly journal: ConsoleJournal,
    @Optional() private readonly relyingParty?: OidcRelyingParty,
  ) {}

  @Get('start')
  async start(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const { oidc, relyingParty } = this.configured();
    await admitAttempt(this.throttle, request, reply);
    let begun: Awaited<ReturnType<OidcRelyingParty['begin']>>;
    try {
      begun = await relyingParty.begin(oidc.redirectUrl ?? derivedRedirectUri(request));
    } catch (error) {
      if (!(error instanceof OidcSignInError)) throw error;
      await this.journal.refused('oidc', error.code, error.detail, null, request);
      return this.backToConsole(reply, error.code);
    }
    const binding = randomBytes(32).toString('base64url');
    const stored: StoredPending = { ...begun.pending, bindingHash: sha256(binding) };
    await this.store.put(pendingKey(begun.pending.state), JSON.stringify(stored), PENDING_TTL_SECONDS * 1000);
    setOidcBindingCookie(reply, binding, PENDING_TTL_SECONDS, secureCookies(request, this.settings.secureCookie));
    reply.header('cache-control', 'no-store').redirect(begun.url, 302);
  }

  @Get('callback')
  async callback(
    @Req() request: FastifyRequest, @Res() reply: FastifyReply,
    @Query('code') code?: string, @Query('state') state?: string, @Query('error') error?: string,
  ): Promise<void> {
    const { oidc, relyingParty } = this.configured();
    const secure = secureCookies(request, this.settings.secureCookie);
    clearOidcBindingCookie(reply, secure);
    // Taken, not read: a state works once, so a replayed callback finds nothing.
    const text = typeof state === 'string' && state.length <= 128 ? await this.store.take(pendingKey(state)) : null;
    const pending = text === null ? null : JSON.parse(text) as StoredPending;
    const binding = cookieOf(request, OIDC_BINDING_COOKIE);
    let user: string | null = null;
    try {
      if (pending === null) throw new OidcSignInError('invalid_state', 'unknown, expired or already used state');
      if (binding === null || !sameHash(sha256(binding), pending.bindingHash)) throw new OidcSignInError('invalid_state', 'the sign-in was started in another browser');
      if (typeof error === 'string') throw new OidcSignInError('access_denied', `the issuer answered ${error.slice(0, 64)}`);
      if (typeof code !== 'string' || code.length === 0 || code.length > 2048) throw new OidcSignInError('invalid_state', 'no authorization code');
      const claims = await relyingParty.complete(pending, code);
      user = userOf(claims);
      const role = roleFromClaim(claims[oidc.roleClaim], oidc.roleMap);
      if (role === null) throw new OidcSignInError('no_role', `no value of the ${oidc.roleClaim} claim maps to a console role`);
      await closePrevious(this.sessions, request);
      const { cookieValue, session } = await this.sessions.open(user, role, 'oidc');
      await this.journal.signedIn(session, request);
      setSessionCookie(reply, cookieValue, secure);
      return this.backToConsole(reply, null);
    } catch (refusal) {
      if (!(refusal instanceof OidcSignInError)) throw refusal;
      await this.journal.refused('oidc', refusal.code, refusal.detail, user, request);
      return this.backToConsole(reply, refusal.code);
    }
  }

  private configured(): { oidc: OidcSettings; relyingParty: OidcRelyingParty } {
    if (!this.settings.oidc || !this.relyingParty) {
      throw new AdminApiError(404, 'oidc_not_configured', 'Single sign-on is not configured on this gateway (SWITCHYARD_CONSOLE_OIDC_ISSUER); sign in with the admin token.');
    }
    return { oidc: this.settings.oidc, relyingParty: this.relyingParty };
  }

  private backToConsole(reply: FastifyReply, signInError: string | null): void {
    reply.header('cache-control', 'no-store').redirect(signInError === null ? '/console/' : `/console/?signInError=${signInError}`, 302);
  }
}

/** The user an ID token names: its email, else its preferred username, else its subject. */
function userOf(claims: Record<string, unknown>): string {
  for (const claim of ['email', 'preferred_username', 'sub']) {
    const value = claims[claim];
    if (typeof value === 'string' && value.length > 0 && value.length <= 256) return value;
  }
  throw new OidcSignInError('invalid_id_token', 'the ID token names no user (no email, preferred_username or sub)');
}

/** `<scheme>://<host>/console/api/oidc/callback` of this request (set SWITCHYARD_CONSOLE_OIDC_REDIRECT_URL behind a proxy). */
function derivedRedirectUri(request: FastifyRequest): string {
  const scheme = (request.raw.socket as TLSSocket).encrypted ? 'https' : 'http';
  return `${scheme}://${request.headers.host ?? 'localhost'}/console/api/oidc/callback`;
}

function pendingKey(state: string): string {
  return `oidc:${sha256(state)}`;
}

function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}
