import { Logger } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { type ConsoleSignInMethod, consoleSessionStream, consoleSignInRefusalStream } from '../../events/index.js';
import { type EventStore, uuidv7 } from '../../src/kernel/index.js';
import type { ConsoleSession } from './console-sessions.js';

/**
 * Records console sign-ins, refusals and sign-outs in the event log, with the user as actor
 * (`console:<user>`) and the role beside it. The request id is the correlation id, as for every admin change.
 */
export class ConsoleJournal {
  private readonly logger = new Logger('Console');

  constructor(private readonly store: Pick<EventStore, 'append'>) {}

  async signedIn(session: ConsoleSession, request: FastifyRequest): Promise<void> {
    await this.store.append({
      streamId: consoleSessionStream(session.sessionRef),
      expectedVersion: 'no-stream',
      events: [{
        type: 'ConsoleSignedIn',
        data: { sessionRef: session.sessionRef, user: session.user, role: session.role, method: session.method, expiresAt: session.expiresAt.toISOString() },
        metadata: { actor: `console:${session.user}`, actorRole: session.role, correlationId: request.id },
      }],
    });
    this.logger.log(`${session.user} signed in to the console (${session.method}, role ${session.role}, session ${session.sessionRef})`);
  }

  async signedOut(session: ConsoleSession, request: FastifyRequest): Promise<void> {
    await this.store.append({
      streamId: consoleSessionStream(session.sessionRef),
      expectedVersion: 'any',
      events: [{
        type: 'ConsoleSignedOut',
        data: { sessionRef: session.sessionRef, user: session.user, role: session.role },
        metadata: { actor: `console:${session.user}`, actorRole: session.role, correlationId: request.id },
      }],
    });
    this.logger.log(`${session.user} signed out of the console (session ${session.sessionRef})`);
  }

  async refused(method: ConsoleSignInMethod, reason: string, detail: string | null, user: string | null, request: FastifyRequest): Promise<void> {
    await this.store.append({
      streamId: consoleSignInRefusalStream(uuidv7()),
      expectedVersion: 'no-stream',
      events: [{
        type: 'ConsoleSignInRefused',
        data: { user, method, reason, detail, clientAddress: request.ip },
        metadata: { actor: user === null ? 'anonymous' : `console:${user}`, correlationId: request.id },
      }],
    });
    this.logger.warn(`console sign-in refused (${method}, ${reason}${detail ? `: ${detail}` : ''}) for ${user ?? 'an unknown user'} from ${request.ip}`);
  }
}
