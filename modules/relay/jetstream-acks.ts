import { JetStreamApiError, type PubAck } from '@nats-io/jetstream';
import { type Msg, type MsgHdrs, type NatsConnection, type Subscription, createInbox } from '@nats-io/transport-node';

/** A publish the stream did not answer in time, or could not (no stream listens on the subject, the connection closed). */
export class PubAckMissingError extends Error {
  override readonly name = 'PubAckMissingError';
}

interface Pending {
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
 * answer as JetStreamApiError; no responders (status 503), a timeout or a closed connection as PubAckMissingError.
 */
export class JetStreamAcks {
  private readonly prefix = `${createInbox()}.`;
  private readonly subscription: Subscription;
  private readonly pending = new Map<string, Pending>();
  private readonly sweeper: NodeJS.Timeout;
  private sequence = 0;

  constructor(private readonly connection: NatsConnection, private readonly timeoutMs: number) {
    this.subscription = connection.subscribe(`${this.prefix}*`, { callback: (error, message) => this.settle(error, message) });
    this.sweeper = setInterval(() => this.sweep(), Math.min(1_000, timeoutMs)).unref();
    void connection.closed().then(() => this.close('the connection closed'));
  }

  publish(subject: string, body: string, headers: MsgHdrs): Promise<PubAck> {
    const token = (++this.sequence).toString(36);
    const answered = new Promise<PubAck>((resolve, reject) => this.pending.set(token, { resolve, reject, deadline: Date.now() + this.timeoutMs }));
    try {
      this.connection.publish(subject, body, { reply: this.prefix + token, headers });
    } catch (error) {
      this.pending.delete(token);
      return Promise.reject(error as Error);
    }
    return answered;
  }

  /** Fails what is still waiting and stops listening (a new connection gets its own). */
  close(reason = 'the relay closed'): void {
    clearInterval(this.sweeper);
    for (const [token, entry] of this.pending) {
      this.pending.delete(token);
      entry.reject(new PubAckMissingError(reason));
    }
    if (!this.subscription.isClosed()) this.subscription.unsubscribe();
  }

  private settle(error: Error | null, message: Msg): void {
    if (error) return this.close(error.message);
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
