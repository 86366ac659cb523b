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
const encoder = new TextEncoder();

const STREAM_OPENING = encoder.encode('{"stream":"');
const SEQ_FIELD = encoder.encode('"seq":');
const DUPLICATE_FIELD = encoder.encode(',"duplicate":');
const TRUE_ENDING = encoder.encode('true}');
const QUOTE = 0x22;
const COMMA = 0x2c;
const SPACE = 0x20;
const BACKSLASH = 0x5c;
const CLOSING_BRACE = 0x7d;
/** Fifteen digits always fit a double exactly; a longer sequence goes through JSON.parse, as it always did. */
const MAX_SEQ_DIGITS = 15;

/**
 * The PubAck of nearly every publish, read from its bytes: `{"stream":"<name>","seq":<n>}`, ending instead in
 * `,"duplicate":true}` for a de-duplicated message — as the server writes them, which differs by version in one
 * space: nats-server up to 2.11 writes `{"stream":"S", "seq":1}`, 2.12 and later `{"stream":"S","seq":1}`, and
 * every version `"duplicate": true`. So one space is allowed after the comma and after `"duplicate":`, nothing
 * else. Decoding and parsing the JSON cost more than the rest of the answer's handling. Anything else — an error,
 * a domain, other fields or spacing, an escaped or non-ASCII name, a leading zero, a longer number — is null: the
 * caller parses it as JSON, which answers it as before. What this returns equals what `JSON.parse` gives (with
 * `duplicate` false when absent, as the tracker sets it).
 */
export function plainPubAck(answer: Uint8Array): PubAck | null {
  if (!startsWith(answer, STREAM_OPENING, 0)) return null;
  const nameStart = STREAM_OPENING.length;
  let at = nameStart;
  for (; at < answer.length && answer[at] !== QUOTE; at++) {
    // Printable ASCII without the escape: the bytes are the name's characters.
    if (answer[at] < 0x20 || answer[at] > 0x7e || answer[at] === BACKSLASH) return null;
  }
  const nameEnd = at;
  if (nameEnd === nameStart || answer[at + 1] !== COMMA) return null;
  at += 2;
  if (answer[at] === SPACE) at++;
  if (!startsWith(answer, SEQ_FIELD, at)) return null;
  const digitsStart = at + SEQ_FIELD.length;
  let seq = 0;
  for (at = digitsStart; at < answer.length && answer[at] >= 0x30 && answer[at] <= 0x39; at++) seq = seq * 10 + answer[at] - 0x30;
  const digits = at - digitsStart;
  if (digits === 0 || digits > MAX_SEQ_DIGITS || (digits > 1 && answer[digitsStart] === 0x30)) return null;
  let duplicate = false;
  if (startsWith(answer, DUPLICATE_FIELD, at)) {
    at += DUPLICATE_FIELD.length;
    if (answer[at] === SPACE) at++;
    if (!startsWith(answer, TRUE_ENDING, at)) return null;
    at += TRUE_ENDING.length - 1;
    duplicate = true;
  }
  if (at !== answer.length - 1 || answer[at] !== CLOSING_BRACE) return null;
  return { stream: String.fromCharCode(...answer.subarray(nameStart, nameEnd)), seq, duplicate };
}

function startsWith(bytes: Uint8Array, part: Uint8Array, at: number): boolean {
  if (at + part.length > bytes.length) return false;
  for (let i = 0; i < part.length; i++) if (bytes[at + i] !== part[i]) return false;
  return true;
}

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
    const data = message.data;
    if (data.length === 0 && message.headers?.code === 503) return entry.reject(new PubAckMissingError(`no JetStream stream answered on ${message.subject}`));
    const plain = plainPubAck(data);
    if (plain) return entry.resolve(plain);
    let answer: PubAck & { error?: ConstructorParameters<typeof JetStreamApiError>[0] };
    try {
      answer = JSON.parse(decoder.decode(data)) as typeof answer;
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
