import { Logger } from '@nestjs/common';
import { type BreakerEvent, breakerStream } from '../../../events/index.js';
import type { EventStore } from '../../../src/kernel/index.js';
import type { BreakerTransition } from './circuit-breaker.js';

/**
 * Appends breaker transitions to `breaker-{deploymentId}` so an incident can be reconstructed from
 * the log: when each node stopped calling a deployment, why (reason and counts), and when it let
 * traffic back. Transitions are rare, so they go straight to the event store (not the request group
 * committer) in the background, one at a time in the order they happened; the request that caused a
 * transition never waits for it. Several nodes append to one stream, hence expected version `any`.
 */
export class BreakerJournal {
  private static readonly logger = new Logger('BreakerJournal');
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Pick<EventStore, 'append'>,
    private readonly nodeId: string,
  ) {}

  record(deploymentId: string, transition: BreakerTransition): void {
    const event = this.toEvent(deploymentId, transition);
    const append = () => this.store.append({
      streamId: breakerStream(deploymentId),
      events: [{ type: event.type, data: event.data, metadata: { actor: 'system', nodeId: this.nodeId, correlationId: deploymentId } }],
      expectedVersion: 'any',
    });
    this.tail = this.tail
      // Another node may have taken the same stream version in the same instant: one retry settles it.
      .then(() => append().catch(() => append()))
      .then(
        () => undefined,
        (error: Error) => BreakerJournal.logger.warn(`breaker event for ${deploymentId} not recorded: ${error.message}`),
      );
  }

  /** Resolves when every transition recorded so far is appended (or given up on). */
  flushed(): Promise<void> {
    return this.tail;
  }

  private toEvent(deploymentId: string, transition: BreakerTransition): BreakerEvent {
    switch (transition.to) {
      case 'open':
        return {
          type: 'BreakerOpened',
          data: {
            deploymentId,
            reason: transition.reason,
            source: transition.source,
            originNodeId: transition.originNodeId ?? this.nodeId,
            counts: transition.counts,
            cooldownMs: transition.cooldownMs,
            openUntil: new Date(transition.openUntil).toISOString(),
          },
        };
      case 'half-open':
        return { type: 'BreakerHalfOpened', data: { deploymentId, source: transition.source, openedForMs: transition.openedForMs } };
      case 'closed':
        return {
          type: 'BreakerClosed',
          data: { deploymentId, source: transition.source, originNodeId: transition.originNodeId ?? this.nodeId, trialSuccesses: transition.trialSuccesses },
        };
    }
  }
}
