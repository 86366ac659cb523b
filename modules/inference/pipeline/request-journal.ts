import { Logger } from '@nestjs/common';
import {
  type AttemptFinished, type RequestAdmitted, type RequestCompleted, type RequestRejected, type RequestServedFromCache, SCHEMA_VERSIONS, requestStream, type TokenUsage,
} from '../../../events/index.js';
import { type GroupCommitter, type NewEvent, uuidv7 } from '../../../src/kernel/index.js';
import type { RequestObservation } from '../../observability/index.js';
import { sumCosts } from '../pricing/attempt-cost.js';
import { admissionRefusal } from './durability-refusal.js';
import type { DurabilityProfile } from './durability.js';

/** How a request ended, as the pipeline knows it; the journal adds the totals from the attempts it recorded. */
export type RequestEnding = Pick<RequestCompleted['data'], 'status' | 'httpStatus' | 'errorCode' | 'cacheHit' | 'contentPolicy'>;

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
 *
 * Settlement lives here too: the request's totals are the sum of the attempts recorded, so nothing else
 * keeps a second account of them.
 */
export class RequestJournal {
  private static readonly logger = new Logger('RequestJournal');
  private admitted: NewEvent | null = null;
  /** Strict only: RequestAdmitted is stored, so the terminal append continues the stream at version 2. */
  private admittedCommitted = false;
  private readonly attempts: Array<AttemptFinished['data']> = [];
  private readonly attemptEvents: NewEvent[] = [];
  private servedFromCache: NewEvent | null = null;
  private terminal: Promise<void> | null = null;
  private readonly startedAt = Date.now();

  constructor(
    private readonly committer: GroupCommitter,
    private readonly profile: DurabilityProfile,
    readonly requestId: string,
    private readonly metadata: Record<string, unknown>,
    /** Told every event this journal records (metrics, traces, the request log); null when nobody observes. */
    private readonly observation: RequestObservation | null = null,
  ) {}

  /** The journal of one request sent with a gateway key: events carry the key as actor and the request id as correlation. */
  static forKey(
    committer: GroupCommitter, profile: DurabilityProfile, nodeId: string, requestId: string, keyId: string, observation: RequestObservation | null = null,
  ): RequestJournal {
    return new RequestJournal(committer, profile, requestId, { actor: `key:${keyId}`, correlationId: requestId, nodeId }, observation);
  }

  /**
   * Records RequestAdmitted. Only the strict profile commits it now (and the caller awaits that before
   * dispatch); otherwise it travels with the terminal events.
   */
  async admit(data: RequestAdmitted['data']): Promise<void> {
    if (this.admitted) throw new Error(`request ${this.requestId} was admitted already`);
    this.admitted = this.event('RequestAdmitted', data);
    if (this.observation) this.observe(() => this.observation!.admitted(data));
    if (this.profile !== 'strict') return;
    try {
      await this.committer.append({ streamId: requestStream(this.requestId), events: [this.admitted], expectedVersion: 'no-stream' });
    } catch (error) {
      RequestJournal.logger.error(`request ${this.requestId}: RequestAdmitted could not be committed: ${(error as Error).message}`);
      throw admissionRefusal(error);
    }
    this.admittedCommitted = true;
  }

  /**
   * Records that admission refused the request (it is then the stream's only event). A refusal is sent
   * at once whatever the profile: under `strict` it waits for the commit first, otherwise the append is
   * group-committed in the background. A failed append is logged and never changes the client's answer.
   */
  async reject(data: RequestRejected['data']): Promise<void> {
    if (this.admitted || this.terminal) throw new Error(`request ${this.requestId} was admitted already`);
    const commit = this.committer
      .append({ streamId: requestStream(this.requestId), events: [this.event('RequestRejected', data)], expectedVersion: 'no-stream' })
      .then(
        () => undefined,
        (error: Error) => RequestJournal.logger.error(`request ${this.requestId}: RequestRejected not recorded: ${error.message}`),
      );
    this.terminal = commit;
    if (this.profile === 'strict') await commit;
  }

  /**
   * What admission reserved, as a usage: the estimated input and the reserved output of every choice.
   * What an attempt whose answer could not be read (too large) is billed: the provider produced it, and
   * the reservation already held that much against the limits and the budget.
   */
  reservedUsage(): TokenUsage {
    const data = this.admitted?.data as RequestAdmitted['data'] | undefined;
    return { input: data?.estimatedInputTokens ?? 0, cachedInput: 0, cacheWrite: 0, output: data?.reservedOutputTokens ?? 0, reasoning: 0 };
  }

  /** Whether RequestAdmitted was recorded (a refusal can then no longer be). */
  get isAdmitted(): boolean {
    return this.admitted !== null;
  }

  recordAttempt(data: AttemptFinished['data']): void {
    this.attempts.push(data);
    this.attemptEvents.push(this.event('AttemptFinished', data));
    if (this.observation) this.observe(() => this.observation!.attemptFinished(data));
  }

  /** Tokens the attempts recorded so far used, summed (what settlement reconciles the reservation with). */
  usage(): TokenUsage {
    return this.settlement().totals.usage;
  }

  /** Tokens the attempts recorded so far used, per deployment (what each quota group is settled with). */
  usageByDeployment(): Map<string, TokenUsage> {
    const byDeployment = new Map<string, TokenUsage>();
    for (const attempt of this.attempts) {
      const sum = byDeployment.get(attempt.deploymentId) ?? { input: 0, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 };
      sum.input += attempt.usage.input;
      sum.cachedInput += attempt.usage.cachedInput;
      sum.cacheWrite += attempt.usage.cacheWrite;
      sum.output += attempt.usage.output;
      sum.reasoning += attempt.usage.reasoning;
      byDeployment.set(attempt.deploymentId, sum);
    }
    return byDeployment;
  }

  /** What the attempts recorded so far cost, in USD (exact decimal string). */
  cost(): string {
    return sumCosts(this.attempts.map((a) => a.cost));
  }

  get attemptCount(): number {
    return this.attempts.length;
  }

  /** The attempt recorded last (the one that answered, when the request succeeded). */
  get lastAttempt(): AttemptFinished['data'] | null {
    return this.attempts.at(-1) ?? null;
  }

  /** Records that the exact cache answered: instead of attempts, not besides them. */
  recordCacheHit(data: RequestServedFromCache['data']): void {
    if (this.attempts.length > 0 || this.servedFromCache) throw new Error(`request ${this.requestId} was answered already`);
    this.servedFromCache = this.event('RequestServedFromCache', data);
  }

  /**
   * Appends what is not stored yet and RequestCompleted, whose totals are settled from the attempts.
   * Resolves when that is durable (default and strict); under the async profile it resolves at once and
   * the append completes in the background. Calling it again returns the first call's promise.
   */
  complete(ending: RequestEnding): Promise<void> {
    if (this.terminal) return this.terminal;
    if (!this.admitted) return Promise.reject(new Error(`request ${this.requestId} completed before it was admitted`));
    const completed: RequestCompleted['data'] = { requestId: this.requestId, ...ending, ...this.settlement() };
    const terminal = [...this.attemptEvents, ...(this.servedFromCache ? [this.servedFromCache] : []), this.event('RequestCompleted', completed)];
    if (this.observation) this.observe(() => this.observation!.completed(completed));
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
    return { eventId: uuidv7(), type, schemaVersion: SCHEMA_VERSIONS[type] ?? 1, data, metadata: this.metadata };
  }

  /**
   * Metrics, spans and the log line are told of each event, but never at the cost of the event: a fault
   * there (a value a histogram refuses, say) is logged and the request is still settled and billed.
   */
  private observe(report: () => void): void {
    try {
      report();
    } catch (error) {
      RequestJournal.logger.error(`request ${this.requestId}: observing it failed (the request is still recorded): ${(error as Error).message}`);
    }
  }
}
