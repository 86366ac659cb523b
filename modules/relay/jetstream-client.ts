import { JetStreamApiError, type PubAck, jetstreamManager } from '@nats-io/jetstream';
import { MsgHdrsImpl, PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';
import type { ReadPacket } from '@nestjs/microservices';
// The client's own module, not the package's index: the relay's thread loads this transport alone (about 14 MB less).
import { ClientNats } from '@nestjs/microservices/client/client-nats.js';
import { JetStreamAcks } from './jetstream-acks.js';
import { type RelayMessage, RelayRefusedError, RelayUnavailableError } from './relay-message.js';
import { natsCredentials } from './relay-transport.js';

/** The JetStream stream the relay publishes to (created if missing) and its subjects' prefix. */
export const NATS_STREAM = 'SWITCHYARD';
export const NATS_SUBJECT_PREFIX = 'switchyard.events';

/** `switchyard.events.<EventType>`. */
export function natsSubject(message: Pick<RelayMessage, 'type'>): string {
  return `${NATS_SUBJECT_PREFIX}.${message.type}`;
}

/**
 * Nest's ClientNats, publishing through JetStream. Its own `emit` is a core NATS publish: fire and forget,
 * no header of ours, no acknowledgement — the relay could not know an event was stored before moving its
 * checkpoint. So this subclass (Nest's extension point: the connection, reconnection and status handling
 * stay ClientNats's) overrides `dispatchEvent`: a JetStream publish with `Nats-Msg-Id` = event id (the stream
 * drops a duplicate inside its window) that resolves only on the stream's PubAck (JetStreamAcks: one reply
 * subscription per connection instead of a core request per message). The body is
 * the relay's envelope as is, not Nest's `{pattern, data}` packet: consumers of any language read it.
 */
export class JetStreamClientProxy extends ClientNats {
  private acks: { connection: NatsConnection; acks: JetStreamAcks } | null = null;
  private streamChecked: NatsConnection | null = null;

  constructor(url: string, private readonly ackTimeoutMs: number) {
    const credentials = natsCredentials(url);
    super({
      servers: serversOf(url),
      ...credentials,
      name: 'switchyard-relay',
      // Keep reconnecting for as long as the process lives: a broker restart must not end the relay.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1_000,
      timeout: ackTimeoutMs,
      // Without it the client builds two Error objects (stack traces included) for every publish, in case its
      // acknowledgement fails later: a third of the relay's CPU per event. A failure still says what failed.
      noAsyncTraces: true,
    });
  }

  /**
   * The relay's publish: what `emit` does (connect, then dispatchEvent), as a plain promise. Once connected with
   * the stream checked, without an await before the publish: each would put a microtask hop between the relay's
   * publishes, and the client writes to its socket at every hop (a write per message instead of one per batch).
   */
  publishEvent(message: RelayMessage): Promise<PubAck> {
    const ready = this.readyAcks();
    if (ready) return this.publishWith(ready, message);
    return this.connect().then(() => this.dispatchEvent({ pattern: message.type, data: message }));
  }

  protected override async dispatchEvent(packet: ReadPacket<RelayMessage>): Promise<PubAck> {
    return this.publishWith(await this.jetStream(), packet.data);
  }

  private publishWith(acks: JetStreamAcks, message: RelayMessage): Promise<PubAck> {
    return acks.publish(natsSubject(message), message.body, new RelayHeaders(message)).catch((error: unknown) => {
      throw classifyNatsError(message, error);
    });
  }

  /** The tracker of the connection in use, when that connection's stream was already checked. */
  private readyAcks(): JetStreamAcks | null {
    const current = this.acks;
    return current && !current.acks.closed && current.connection === this.natsClient && this.streamChecked === current.connection ? current.acks : null;
  }

  /** The current connection's PubAck tracker, with the stream made sure of once per connection. */
  private async jetStream(): Promise<JetStreamAcks> {
    const connection = this.unwrap<NatsConnection>();
    // A new connection, or a tracker whose reply subscription failed: a fresh one (whose subscription may succeed).
    if (this.acks?.connection !== connection || this.acks.acks.closed) {
      this.acks?.acks.close('the relay reconnected');
      this.acks = { connection, acks: new JetStreamAcks(connection, this.ackTimeoutMs) };
    }
    const tracker = this.acks.acks; // captured: close() may clear this.acks while the stream is checked
    if (this.streamChecked !== connection) {
      await ensureStream(connection, this.ackTimeoutMs);
      this.streamChecked = connection;
    }
    return tracker;
  }

  override async close(): Promise<void> {
    this.acks?.acks.close();
    this.acks = null;
    await super.close();
  }
}

/**
 * A relay message's headers: `Nats-Msg-Id` (the stream's de-duplication), `Switchyard-Event-Type`,
 * `Switchyard-Stream-Id` and the content type. The library's `set` canonicalizes the name and searches the keys
 * on every call, and its `encode` goes through a TextEncoder (a fresh buffer each time): about 4 µs an event for
 * four fixed names. Here the map is filled directly, each value checked as `set` checks it (no CR or LF,
 * trimmed), and encoded into Node's pooled buffers: the same bytes, written by the library's own `toString`.
 */
export class RelayHeaders extends MsgHdrsImpl {
  constructor(message: RelayMessage) {
    super();
    this.headers.set('Nats-Msg-Id', [MsgHdrsImpl.validHeaderValue(message.eventId)]);
    this.headers.set('Switchyard-Event-Type', [MsgHdrsImpl.validHeaderValue(message.type)]);
    this.headers.set('Switchyard-Stream-Id', [MsgHdrsImpl.validHeaderValue(message.streamId)]);
    this.headers.set('Content-Type', ['application/json']);
  }

  override encode(): Uint8Array {
    return Buffer.from(this.toString());
  }
}

/** Creates the stream when it is missing; an existing one (an operator's limits, replicas) is left as it is. */
async function ensureStream(connection: NatsConnection, timeout: number): Promise<void> {
  try {
    const manager = await jetstreamManager(connection, { timeout });
    try {
      await manager.streams.info(NATS_STREAM);
    } catch (error) {
      if (!(error instanceof JetStreamApiError) || error.status !== 404) throw error;
      await manager.streams.add({ name: NATS_STREAM, subjects: [`${NATS_SUBJECT_PREFIX}.>`] });
    }
  } catch (error) {
    throw new RelayUnavailableError('NATS', `the JetStream stream ${NATS_STREAM} could not be checked or created (${(error as Error).message})`, { cause: error });
  }
}

/**
 * A JetStream API error (the stream answered: message too large, a limit reached with discard=new, a
 * wrong expectation) or a core refusal (over the server's max_payload, a permission violation) would come
 * back the same: refused. A timeout, no responders (the stream's leader is away) or a lost connection may
 * pass later: unavailable.
 */
function classifyNatsError(message: RelayMessage, error: unknown): Error {
  const reason = error instanceof Error ? error.message : String(error);
  if (error instanceof JetStreamApiError && error.status !== 503) return new RelayRefusedError('NATS', message.eventId, `${reason} (JetStream error ${error.code})`, { cause: error });
  if (error instanceof PermissionViolationError || /max_payload|permissions? violation/i.test(reason)) {
    return new RelayRefusedError('NATS', message.eventId, reason, { cause: error });
  }
  return new RelayUnavailableError('NATS', reason, { cause: error });
}

function authorityOf(url: string): string {
  return url.replace(/^nats:\/\//i, '').split(/[/?#]/, 1)[0];
}

function serversOf(url: string): string[] {
  const authority = authorityOf(url);
  return authority.slice(authority.lastIndexOf('@') + 1).split(',').map((server) => server.trim());
}
