import { Logger } from '@nestjs/common';
import type {
  AttemptFinished, RequestAdmitted, RequestCompleted,
} from '../../../events/request-events.js';
import { type TokenUsage, requestStream } from '../../../events/request-events.js';
import { sumCosts } from '../pricing/attempt-cost.js';
import type { NewEvent } from '../../../src/kernel/event-store/event-store.js';
import type { GroupCommitter } from '../../../src/kernel/event-store/group-committer.js';
import type { DurabilityProfile } from './durability.js';

/** How a request ended, as the pipeline knows it; the journal adds the totals from the attempts it recorded. */
export type RequestEnding = Pick<RequestCompleted['data'], 'status' | 'httpStatus' | 'errorCode' | 'cacheHit'>;

/**
 * The events of one request, appended through the group committer in stream order: RequestAdmitted as
 * version 1, then every AttemptFinished and the RequestCompleted together. The terminal append waits
 * for RequestAdmitted's commit so versions never leave a gap; if that commit failed, both go together.
 * Settlement lives here too: the request's totals are the sum of the attempts recorded, so nothing else
 * keeps a second account of them.
 */
export class RequestJournal {
  private static readonly logger = new Logger('RequestJournal');
  private admitted: NewEvent | null = null;
  private admittedCommit: Promise<boolean> | null = null;
  private readonly attempts: Array<AttemptFinished['data']> = [];
  private terminal: Promise<void> | null = null;
  private readonly startedAt = Date.now();

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

  /** Appends RequestAdmitted; under the strict profile the caller awaits it before dispatch. */
  admit(data: RequestAdmitted['data']): Promise<void> {
    this.admitted = this.event('RequestAdmitted', data);
    this.admittedCommit = this.committer
      .append({ streamId: requestStream(this.requestId), events: [this.admitted], expectedVersion: 'no-stream' })
      .then(() => true, () => false);
    if (this.profile !== 'strict') return Promise.resolve();
    return this.admittedCommit.then((ok) => {
      if (!ok) throw new Error('RequestAdmitted could not be committed');
    });
  }

  recordAttempt(data: AttemptFinished['data']): void {
    this.attempts.push(data);
  }

  get attemptCount(): number {
    return this.attempts.length;
  }

  /**
   * Appends the attempts and RequestCompleted. Resolves when they are durable (default and strict);
   * under the async profile it resolves at once and the append completes in the background.
   */
  complete(ending: RequestEnding): Promise<void> {
    if (this.terminal) return this.terminal;
    const data: RequestCompleted['data'] = { requestId: this.requestId, ...ending, ...this.settlement() };
    const events = [...this.attempts.map((attempt) => this.event('AttemptFinished', attempt)), this.event('RequestCompleted', data)];
    const commit = (async () => {
      const admittedOk = await this.admittedCommit;
      await this.committer.append({
        streamId: requestStream(this.requestId),
        events: admittedOk ? events : [this.admitted!, ...events],
        expectedVersion: admittedOk ? 1 : 'no-stream',
      });
    })();
    this.terminal = commit;
    if (this.profile === 'async') {
      commit.catch((error: Error) => RequestJournal.logger.error(`request ${this.requestId}: terminal events lost: ${error.message}`));
      return Promise.resolve();
    }
    return commit;
  }

  /** RequestCompleted's totals and fallback depth, from the attempts recorded. */
  private settlement(): Pick<RequestCompleted['data'], 'fallbackDepth' | 'totals'> {
    const usage: TokenUsage = { input: 0, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 };
    for (const attempt of this.attempts) {
      usage.input += attempt.usage.input;
      usage.cachedInput += attempt.usage.cachedInput;
      usage.cacheWrite += attempt.usage.cacheWrite;
      usage.output += attempt.usage.output;
      usage.reasoning += attempt.usage.reasoning;
    }
    return {
      fallbackDepth: Math.max(0, this.attempts.length - 1),
      totals: { usage, costUsd: sumCosts(this.attempts.map((a) => a.cost)), attempts: this.attempts.length, latencyMs: Date.now() - this.startedAt },
    };
  }

  private event(type: string, data: unknown): NewEvent {
    return { type, data, metadata: this.metadata };
  }
}
