import { Logger } from '@nestjs/common';
import type { DurableProjection, EventTypeFilter, FailureKind, RecordedEvent, SqlExecutor } from '../../src/kernel/index.js';
import { RELAY_ACK_TIMEOUT_MS } from './relay-client.js';
import { RelayRefusedError, RelayUnavailableError, RelayUnserializableError } from './relay-message.js';
import { RELAY_BROKER_NAMES, type RelaySettings, type RelayTransport } from './relay-settings.js';
import { type PublishedPage, RelayThread } from './relay-thread.js';

/** The relay's checkpoint name (in `projection_checkpoints`, `projection_halts`, /metrics and the projections' report). */
export const RELAY_PROJECTION = 'relay';

/** The first and the longest wait between attempts while the broker is away. */
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;

/** Where the relay's pages are published: its thread (`relay-thread.ts`). */
export interface RelayPublisher {
  /** A page of events, in commit order. */
  publish(events: readonly RecordedEvent[]): Promise<PublishedPage>;
  close(): Promise<void>;
}

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
 * client proxy on a thread of its own (`RelayThread`: the thread the projection runs on — the serving thread on
 * the embedded default — only hands the events over). A singleton durable projection (one publisher per
 * installation: the runner's advisory-lock lease) whose checkpoint is `projection_checkpoints.relay`.
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
  /** The page `prepare` published last, every event of it acknowledged (the runner hands `handle` the same array). */
  private acknowledged: readonly RecordedEvent[] | null = null;
  private backoffMs = 0;
  private retryAt = 0;
  private lastFailure: string | null = null;
  /** The event the broker last refused: its log line is written once, however often the page is narrowed down. */
  private lastRefusedEventId: string | null = null;

  private readonly broker: string;

  /** A refusal halts the relay: the broker's limit or permission is what fixes it, not the log. */
  haltRemedy(error: unknown): string | null {
    return error instanceof RelayRefusedError ? "on the broker: raise the limit the message went over, or grant the relay's user the permission it lacks" : null;
  }

  constructor(
    readonly transport: RelayTransport,
    readonly eventTypes: EventTypeFilter,
    private readonly publisher: RelayPublisher,
  ) {
    this.broker = RELAY_BROKER_NAMES[transport];
  }

  async prepare(events: readonly RecordedEvent[]): Promise<void> {
    this.acknowledged = null;
    // The same words as the failure that started the backoff: the runner warns once per distinct message, so a
    // different one here would put two warning lines in the log for every retry of an outage.
    if (Date.now() < this.retryAt) throw new RelayUnavailableError(this.broker, this.lastFailure ?? 'backing off');
    // The events cross to the relay's thread as they are, which does everything else.
    let page: PublishedPage;
    try {
      page = await this.publisher.publish(events);
    } catch (error) {
      // The thread lost or closed: transient. Anything else (a page that cannot cross to the thread) fails the same
      // way again: thrown as the projection's own, so the runner halts at the event instead of retrying forever.
      if (!(error instanceof RelayUnavailableError)) throw error;
      page = { published: 0, failure: error };
    }
    if (page.failure instanceof RelayUnserializableError) throw page.failure;
    this.stats.published += page.published;
    if (!page.failure) {
      this.acknowledged = events;
      if (this.lastFailure) this.logger.log(`${this.broker}: publishing again (the broker acknowledges)`);
      this.backoffMs = 0;
      this.lastFailure = null;
      return;
    }
    // A refusal first: it is the one that must stop the relay (the runner isolates the event it names).
    const refusal = page.failure instanceof RelayRefusedError ? page.failure : null;
    if (refusal) {
      this.stats.refused++;
      // The runner then tries the page in parts to find the one event refused on its own, and halts there
      // (its error log names it); with RabbitMQ every publish in flight shares one refusal, hence "a message".
      // Once per refused event: the runner's narrowing meets the same refusal on each part it tries.
      if (refusal.eventId !== this.lastRefusedEventId) {
        this.logger.error(`the ${this.broker} broker refused a message (${refusal.message}); the relay stops at the refused event until the cause is fixed and it is resumed`);
      }
      this.lastRefusedEventId = refusal.eventId;
      throw refusal;
    }
    const error = page.failure;
    this.stats.unavailable++;
    this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs ? this.backoffMs * 2 : FIRST_BACKOFF_MS);
    this.retryAt = Date.now() + this.backoffMs;
    // Once per distinct failure: during an outage every retry fails the same way.
    const reason = error.reason;
    if (reason !== this.lastFailure) this.logger.warn(`${error.message}; the checkpoint stays, retrying with backoff (serving is not affected)`);
    this.lastFailure = reason;
    throw error;
  }

  /** Runs in the checkpoint's transaction: it moves only past events the broker acknowledged. */
  async handle(_tx: SqlExecutor, events: readonly RecordedEvent[]): Promise<void> {
    if (events !== this.acknowledged) throw new RelayUnavailableError(this.broker, `the page from global position ${events[0]?.globalPosition} was not acknowledged as a whole; publishing it again`);
  }

  classify(error: unknown): FailureKind | undefined {
    if (error instanceof RelayRefusedError) return 'deterministic';
    if (error instanceof RelayUnavailableError) return 'transient';
    return undefined;
  }

  /** A checkpoint (re)loaded: whatever the last page acknowledged is no longer the page at hand. */
  async resume(): Promise<void> {
    this.acknowledged = null;
  }

  async close(): Promise<void> {
    await this.publisher.close().catch(() => undefined);
  }
}

/** The relay for SWITCHYARD_RELAY_URL, publishing through a thread of its own; nothing connects until its first page. */
export function openRelay(settings: RelaySettings, ackTimeoutMs = RELAY_ACK_TIMEOUT_MS): RelayProjection {
  const { transport, url, servers } = settings;
  return new RelayProjection(transport, settings.events, new RelayThread({ settings: { transport, url, servers }, ackTimeoutMs }));
}
