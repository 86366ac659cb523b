import { JetStreamApiError, type PubAck } from '@nats-io/jetstream';
import { type Msg, type MsgHdrs, type NatsConnection, PermissionViolationError, type Status, type Subscription, createInbox } from '@nats-io/transport-node';

/** A publish the stream did not answer in time, or could not (no stream listens on the subject, the connection closed). */
export class PubAckMissingError extends Error {
  override readonly name = 'PubAckMissingError';
}

interface Pending {
  subject: string;
  resolve(ack: PubAck): void;
  reject(error: Error): void;
  deadline: number;
}

const decoder = new TextDecoder();

/**
 * JetStream publishes awaited through one reply subscription of the connection's own (`<inbox>.*`, a token per
 * publish), as JetStream's asynchronous publish works in other clients. The library's `publish` is a core request
 * per message: a mux entry, a timer and two promises raced, and — in the request's clean-up after every successful
 * answer — an Error with its stack trace (`RequestError("cancelled")`), about half of the relay's CPU per event.
 * Here an answer settles its promise directly, and one sweep a second times out what the stream did not answer.
 *
 * Same outcomes as `js.publish`: the PubAck (duplicates included, `duplicate: true`); a JetStream API error in the
 * answer as JetStreamApiError; the server refusing the publish or the reply subscription (a permissions violation)
 * as its PermissionViolationError; no responders (status 503), a timeout or a closed connection as PubAckMissingError.
 * Once closed (or its subscription failed) it answers every publish at once with that failure: its owner replaces it.
 */
export class JetStreamAcks {
  private readonly prefix = `${createInbox()}.`;
  private readonly subscription: Subscription;
  private readonly pending = new Map<string, Pending>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly statuses: AsyncIterable<Status> & { stop?: () => void };
  private sequence = 0;
  /** Why it no longer tracks anything; null while it does. */
  private failure: Error | null = null;

  constructor(private readonly connection: NatsConnection, private readonly timeoutMs: number) {
    this.subscription = connection.subscribe(`${this.prefix}*`, { callback: (error, message) => this.settle(error, message) });
    this.sweeper = setInterval(() => this.sweep(), Math.min(1_000, timeoutMs)).unref();
    this.statuses = connection.status();
    void this.watchRefusals();
    void connection.closed().then(() => this.close('the connection closed'));
  }

  /** Closed, or its reply subscription failed: every publish would wait in vain. */
  get closed(): boolean {
    return this.failure !== null;
  }

  publish(subject: string, body: string, headers: MsgHdrs): Promise<PubAck> {
    if (this.failure) return Promise.reject(this.failure);
    const token = (++this.sequence).toString(36);
    const answered = new Promise<PubAck>((resolve, reject) => this.pending.set(token, { subject, resolve, reject, deadline: Date.now() + this.timeoutMs }));
    try {
      // Encoded here into Node's pooled buffers: the client's own TextEncoder allocates a fresh buffer a message.
      this.connection.publish(subject, Buffer.from(body), { reply: this.prefix + token, headers });
    } catch (error) {
      this.pending.delete(token);
      return Promise.reject(error as Error);
    }
    return answered;
  }

  /** Fails what is still waiting, and every later publish, and stops listening (a new connection gets its own). */
  close(reason: string | Error = 'the relay closed'): void {
    const failure = typeof reason === 'string' ? new PubAckMissingError(reason) : reason;
    this.failure ??= failure;
    clearInterval(this.sweeper);
    this.statuses.stop?.();
    for (const [token, entry] of this.pending) {
      this.pending.delete(token);
      entry.reject(failure);
    }
    if (!this.subscription.isClosed()) this.subscription.unsubscribe();
  }

  /**
   * The server refuses a publish (a permissions violation) with an error for the connection, naming the subject, and
   * sends no answer: the publishes waiting on that subject fail with it instead of timing out (a refusal, not an outage).
   */
  private async watchRefusals(): Promise<void> {
    for await (const status of this.statuses) {
      if (this.failure) return;
      const error = status.type === 'error' ? status.error : null;
      if (!(error instanceof PermissionViolationError) || error.operation !== 'publish') continue;
      for (const [token, entry] of this.pending) {
        if (entry.subject !== error.subject) continue;
        this.pending.delete(token);
        entry.reject(error);
      }
    }
  }

  private settle(error: Error | null, message: Msg): void {
    if (error) return this.close(error); // the reply subscription itself was refused or closed
    const token = message.subject.slice(this.prefix.length);
    const entry = this.pending.get(token);
    if (!entry) return; // answered after its timeout: the publish was already failed and will be retried
    this.pending.delete(token);
    if (message.data.length === 0 && message.headers?.code === 503) return entry.reject(new PubAckMissingError(`no JetStream stream answered on ${message.subject}`));
    let answer: PubAck & { error?: ConstructorParameters<typeof JetStreamApiError>[0] };
    try {
      answer = JSON.parse(decoder.decode(message.data)) as typeof answer;
    } catch {
      return entry.reject(new PubAckMissingError('the stream answered with something that is not a PubAck'));
    }
    if (answer.error) return entry.reject(new JetStreamApiError(answer.error));
    answer.duplicate ??= false;
    entry.resolve(answer);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [token, entry] of this.pending) {
      if (entry.deadline > now) continue;
      this.pending.delete(token);
      entry.reject(new PubAckMissingError(`no acknowledgement within ${this.timeoutMs} ms`));
    }
  }
}
