import { Logger } from '@nestjs/common';
import type {
  AttemptFinished, RequestAdmitted, RequestCompleted,
} from '../../../events/request-events.js';
import { requestStream } from '../../../events/request-events.js';
import type { NewEvent } from '../../../src/kernel/event-store/event-store.js';
import type { GroupCommitter } from '../../../src/kernel/event-store/group-committer.js';
import { uuidv7 } from '../../../src/kernel/ids.js';
import type { DurabilityProfile } from './durability.js';

/**
 * The events of one request, appended through the group committer (DESIGN §7). Under the default
 * profile the request commits once: RequestAdmitted, every AttemptFinished and RequestCompleted in one
 * append, before the last byte reaches the client. Under `strict`, RequestAdmitted is committed on its
 * own before the first provider call, and the rest follows as versions 2…n. Under `async` the one append
 * happens in the background and nobody waits.
 *
 * Every event gets its UUIDv7 once, when the journal creates it, so an append that is tried again after
 * an ambiguous failure (the connection lost during COMMIT) finds its events stored and returns their
 * positions: a request is never billed twice, nor lost to a version conflict with itself.
 */
export class RequestJournal {
  private static readonly logger = new Logger('RequestJournal');
  private admitted: NewEvent | null = null;
  /** Strict only: RequestAdmitted is stored, so the terminal append continues the stream at version 2. */
  private admittedCommitted = false;
  private readonly attempts: NewEvent[] = [];
  private terminal: Promise<void> | null = null;

  constructor(
    private readonly committer: GroupCommitter,
    private readonly profile: DurabilityProfile,
    readonly requestId: string,
    private readonly metadata: Record<string, unknown>,
  ) {}

  /** The journal of one request sent with a gateway key: events carry the key as actor and the request id as correlation. */
  static forKey(committer: GroupCommitter, profile: DurabilityProfile, nodeId: string, requestId: string, keyId: string): RequestJournal {
    return new RequestJournal(committer, profile, requestId, { actor: `key:${keyId}`, correlationId: requestId, nodeId });
  }

  /** RequestAdmitted from what every operation knows (who, which alias on which snapshot) plus its own details. */
  admitRequest(
    who: { tenantId: string; keyId: string },
    alias: { name: string; version: number },
    snapshotPosition: number,
    headers: Record<string, string | string[] | undefined>,
    details: Pick<RequestAdmitted['data'], 'clientFormat' | 'operation' | 'stream' | 'estimatedInputTokens' | 'reservedOutputTokens'>,
  ): Promise<void> {
    const idempotencyKey = headers['idempotency-key'];
    return this.admit({
      requestId: this.requestId,
      tenantId: who.tenantId,
      keyId: who.keyId,
      alias: alias.name,
      aliasVersion: alias.version,
      snapshotPosition,
      ...details,
      idempotencyKey: (Array.isArray(idempotencyKey) ? idempotencyKey[0] : idempotencyKey) ?? null,
    });
  }

  /**
   * Records RequestAdmitted. Only the strict profile commits it now (and the caller awaits that before
   * dispatch); otherwise it travels with the terminal events.
   */
  async admit(data: RequestAdmitted['data']): Promise<void> {
    if (this.admitted) throw new Error(`request ${this.requestId} was admitted already`);
    this.admitted = this.event('RequestAdmitted', data);
    if (this.profile !== 'strict') return;
    try {
      await this.committer.append({ streamId: requestStream(this.requestId), events: [this.admitted], expectedVersion: 'no-stream' });
    } catch (error) {
      throw new Error(`RequestAdmitted could not be committed: ${(error as Error).message}`);
    }
    this.admittedCommitted = true;
  }

  recordAttempt(data: AttemptFinished['data']): void {
    this.attempts.push(this.event('AttemptFinished', data));
  }

  get attemptCount(): number {
    return this.attempts.length;
  }

  /**
   * Appends what is not stored yet and RequestCompleted. Resolves when that is durable (default and
   * strict); under the async profile it resolves at once and the append completes in the background.
   * Calling it again returns the first call's promise.
   */
  complete(data: RequestCompleted['data']): Promise<void> {
    if (this.terminal) return this.terminal;
    if (!this.admitted) return Promise.reject(new Error(`request ${this.requestId} completed before it was admitted`));
    const terminal = [...this.attempts, this.event('RequestCompleted', data)];
    const commit = this.committer
      .append(
        this.admittedCommitted
          ? { streamId: requestStream(this.requestId), events: terminal, expectedVersion: 1 }
          : { streamId: requestStream(this.requestId), events: [this.admitted, ...terminal], expectedVersion: 'no-stream' },
      )
      .then(() => undefined);
    this.terminal = commit;
    if (this.profile === 'async') {
      commit.catch((error: Error) => RequestJournal.logger.error(`request ${this.requestId}: events lost: ${error.message}`));
      return Promise.resolve();
    }
    return commit;
  }

  private event(type: string, data: unknown): NewEvent {
    return { eventId: uuidv7(), type, data, metadata: this.metadata };
  }
}
