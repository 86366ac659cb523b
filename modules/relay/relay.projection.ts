import { Logger } from '@nestjs/common';
import type { ClientProxy } from '@nestjs/microservices';
import type { DurableProjection, EventTypeFilter, FailureKind, RecordedEvent, SqlExecutor } from '../../src/kernel/index.js';
import { type RelayMessage, RelayRefusedError, RelayUnavailableError, relayMessage } from './relay-message.js';
import type { RelayTransport } from './relay-settings.js';

/** The relay's checkpoint name (in `projection_checkpoints`, `projection_halts`, /metrics and the projections' report). */
export const RELAY_PROJECTION = 'relay';

/** The first and the longest wait between attempts while the broker is away. */
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;

const BROKER_NAMES: Record<RelayTransport, string> = { nats: 'NATS', amqp: 'RabbitMQ', kafka: 'Kafka' };

/**
 * What the relay needs of its Nest client proxy (every transport's status type differs, so not the whole class):
 * `publishEvent`, which each of the relay's proxies implements as what `emit` does — connect, then `dispatchEvent` —
 * without the observable pipeline `emit` builds per message (about 40 µs of CPU an event).
 */
export type RelayClientProxy = Pick<ClientProxy, 'close'> & { publishEvent(message: RelayMessage): Promise<unknown> };

/** What the relay has done since the process started (for /metrics). */
export interface RelayStats {
  published: number;
  /** Publishes that failed because the broker was away or slow (retried after a backoff). */
  unavailable: number;
  /** Messages the broker refused (the relay stops at the first one). */
  refused: number;
}

/**
 * Publishes every committed event of the configured types, in commit order, to one broker through a Nest
 * client proxy — a singleton durable projection (one publisher per installation: the runner's advisory-lock
 * lease) whose checkpoint is `projection_checkpoints.relay`.
 *
 * The page is published in `prepare`, before the runner's transaction opens, and that transaction moves the
 * checkpoint only if every event of the page was acknowledged by the broker (`handle` checks it): the
 * checkpoint never passes an event the broker has not stored, and no database transaction (on the embedded
 * engine, every request's append) waits on the broker. A crash between the acknowledgement and the commit
 * publishes the page again: at least once, de-duplicable by `eventId` (NATS drops the duplicate itself).
 *
 * Per-stream order holds even under failures: a stream's events are published one after the other, each
 * only once the one before it was acknowledged, so a failure leaves a stream's later events unpublished and
 * the retry starts from the checkpoint, before them. Different streams go out concurrently.
 *
 * A broker that is away (or slow past the acknowledgement timeout) is a transient failure: the relay backs
 * off (0.5 s doubling to 30 s) and the runner retries from the checkpoint. A broker that refuses a message
 * (too large, not authorized) would refuse it again: the failure is deterministic, so the runner isolates
 * the event and halts the relay at it (`projection_halts`, `switchyard_projection_halted`), never skipping.
 */
export class RelayProjection implements DurableProjection {
  readonly name = RELAY_PROJECTION;
  readonly stats: RelayStats = { published: 0, unavailable: 0, refused: 0 };
  private readonly logger = new Logger('Relay');
  /** The event ids of the page `prepare` published last, all acknowledged. */
  private acknowledged = new Set<string>();
  private backoffMs = 0;
  private retryAt = 0;
  private lastFailure: string | null = null;

  private readonly broker: string;

  constructor(
    readonly transport: RelayTransport,
    readonly eventTypes: EventTypeFilter,
    private readonly client: RelayClientProxy,
  ) {
    this.broker = BROKER_NAMES[transport];
  }

  async prepare(events: readonly RecordedEvent[]): Promise<void> {
    this.acknowledged = new Set();
    if (Date.now() < this.retryAt) throw new RelayUnavailableError(this.broker, `${this.lastFailure} (backing off)`);
    const streams = new Map<string, RelayMessage[]>();
    for (const event of events) {
      const message = relayMessage(event);
      const stream = streams.get(message.streamId);
      if (stream) stream.push(message);
      else streams.set(message.streamId, [message]);
    }
    const outcomes = await Promise.allSettled([...streams.values()].map((stream) => this.publishInOrder(stream)));
    const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
    if (failures.length === 0) {
      if (this.lastFailure) this.logger.log(`${this.broker}: publishing again (the broker acknowledges)`);
      this.backoffMs = 0;
      this.lastFailure = null;
      return;
    }
    // A refusal first: it is the one that must stop the relay (the runner isolates the event it names).
    const refusal = failures.find((failure) => failure instanceof RelayRefusedError);
    if (refusal) {
      this.stats.refused++;
      // The runner then tries the page in parts to find the one event refused on its own, and halts there
      // (its error log names it); with RabbitMQ every publish in flight shares one refusal, hence "a message".
      this.logger.error(`the ${this.broker} broker refused a message (${(refusal as Error).message}); the relay stops at the refused event until the cause is fixed and it is resumed`);
      throw refusal;
    }
    const failure = failures[0];
    const error = failure instanceof RelayUnavailableError ? failure : new RelayUnavailableError(this.broker, failure instanceof Error ? failure.message : String(failure), { cause: failure });
    this.stats.unavailable++;
    this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs ? this.backoffMs * 2 : FIRST_BACKOFF_MS);
    this.retryAt = Date.now() + this.backoffMs;
    // Once per distinct failure: during an outage every retry fails the same way.
    const reason = error.reason;
    if (reason !== this.lastFailure) this.logger.warn(`${error.message}; the checkpoint stays, retrying with backoff (serving is not affected)`);
    this.lastFailure = reason;
    throw error;
  }

  private async publishInOrder(stream: readonly RelayMessage[]): Promise<void> {
    for (const message of stream) {
      await this.client.publishEvent(message);
      this.acknowledged.add(message.eventId);
      this.stats.published++;
    }
  }

  /** Runs in the checkpoint's transaction: it moves only past events the broker acknowledged. */
  async handle(_tx: SqlExecutor, events: readonly RecordedEvent[]): Promise<void> {
    const missing = events.find((event) => !this.acknowledged.has(event.eventId));
    if (missing) throw new RelayUnavailableError(this.broker, `event ${missing.eventId} was not acknowledged; publishing the page again`);
  }

  classify(error: unknown): FailureKind | undefined {
    if (error instanceof RelayRefusedError) return 'deterministic';
    if (error instanceof RelayUnavailableError) return 'transient';
    return undefined;
  }

  /** A checkpoint (re)loaded: whatever the last page acknowledged is no longer the page at hand. */
  async resume(): Promise<void> {
    this.acknowledged = new Set();
  }

  async close(): Promise<void> {
    await Promise.resolve(this.client.close()).catch(() => undefined);
  }
}
