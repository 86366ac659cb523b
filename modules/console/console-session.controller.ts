import { Body, Controller, Delete, Get, HttpCode, Inject, Post, Req, Res, UseFilters, UsePipes } from '@nestjs/common';
import { IsString, MaxLength, MinLength } from 'class-validator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminApiError, AdminExceptionFilter, AdminTokens, adminValidationPipe, requireCsrfToken, sessionCookieOf, sessionRequired } from '../admin/index.js';
import { clearSessionCookie, secureCookies, setSessionCookie } from './console-cookies.js';
import { ConsoleJournal } from './console-journal.js';
import { CONSOLE_SETTINGS, type ConsoleSettings } from './console-settings.js';
import { type ConsoleSession, ConsoleSessions } from './console-sessions.js';
import { SignInRateLimited, SignInThrottle } from './sign-in-throttle.js';

export class TokenSignInDto {
  @IsString() @MinLength(1) @MaxLength(512)
  token!: string;
}

/** What the browser learns about its session: never the cookie value, which it cannot read anyway. */
export interface SessionView {
  user: string;
  role: string;
  method: string;
  csrfToken: string;
  idleExpiresAt: string;
  expiresAt: string;
}

export function sessionView(session: ConsoleSession): SessionView {
  return {
    user: session.user,
    role: session.role,
    method: session.method,
    csrfToken: session.csrfToken,
    idleExpiresAt: session.idleExpiresAt.toISOString(),
    expiresAt: session.expiresAt.toISOString(),
  };
}

/**
 * The console's sign-in with the admin token, its session and sign-out (docs/console.md). A token sign-in
 * gets the role `admin` and the user `admin:<token id>`. Attempts are bounded per client address; each
 * outcome is an event (ConsoleSignedIn, ConsoleSignInRefused, ConsoleSignedOut).
 */
@Controller('console/api')
@UseFilters(AdminExceptionFilter)
export class ConsoleSessionController {
  constructor(
    @Inject(CONSOLE_SETTINGS) private readonly settings: ConsoleSettings,
    private readonly sessions: ConsoleSessions,
    private readonly throttle: SignInThrottle,
    private readonly journal: ConsoleJournal,
    private readonly tokens: AdminTokens,
  ) {}

  /** Public: how the sign-in page may sign in. */
  @Get('config')
  config() {
    return { signIn: { token: true, oidc: this.settings.oidc ? { name: this.settings.oidc.name } : null } };
  }

  @Post('session')
  @HttpCode(200)
  @UsePipes(adminValidationPipe())
  async signIn(@Body() body: TokenSignInDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<SessionView> {
    await admitAttempt(this.throttle, request, reply);
    const tokenId = this.tokens.verify(body.token);
    if (tokenId === null) {
      await this.journal.refused('token', 'invalid_token', null, null, request);
      throw new AdminApiError(401, 'unauthorized', 'The admin token is not valid.');
    }
    await closePrevious(this.sessions, request);
    const { cookieValue, session } = await this.sessions.open(`admin:${tokenId}`, 'admin', 'token');
    await this.journal.signedIn(session, request);
    setSessionCookie(reply, cookieValue, secureCookies(request, this.settings.secureCookie));
    return sessionView(session);
  }

  @Get('session')
  async current(@Req() request: FastifyRequest): Promise<SessionView> {
    return sessionView(await this.liveSession(request));
  }

  @Delete('session')
  @HttpCode(204)
  async signOut(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    const session = await this.liveSession(request);
    requireCsrfToken(request.headers, session);
    await this.sessions.close(sessionCookieOf(request.headers.cookie)!);
    await this.journal.signedOut(session, request);
    clearSessionCookie(reply, secureCookies(request, this.settings.secureCookie));
  }

  private async liveSession(request: FastifyRequest): Promise<ConsoleSession> {
    const cookie = sessionCookieOf(request.headers.cookie);
    const session = cookie === null ? null : await this.sessions.find(cookie);
    if (session === null) throw sessionRequired();
    return session;
  }
}

/** A browser signing in again leaves no second session behind: the one its cookie names ends. */
export async function closePrevious(sessions: ConsoleSessions, request: FastifyRequest): Promise<void> {
  const previous = sessionCookieOf(request.headers.cookie);
  if (previous !== null) await sessions.close(previous);
}

/** Counts a sign-in attempt of the request's address; over the bound, 429 with `retry-after`. */
export async function admitAttempt(throttle: SignInThrottle, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  try {
    await throttle.admit(request.ip);
  } catch (error) {
    // On the raw response: the admin error filter writes its answer there, keeping headers set this way.
    if (error instanceof SignInRateLimited) reply.raw.setHeader('retry-after', String(error.retryAfterSeconds));
    throw error;
  }
}
