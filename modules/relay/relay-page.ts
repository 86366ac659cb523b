import { type RelayMessage, RelayRefusedError, RelayUnavailableError } from './relay-message.js';

/** What a relay client proxy must do: publish one message and resolve once the broker acknowledged it. */
export interface RelayPublishing {
  publishEvent(message: RelayMessage): Promise<unknown>;
}

/** A page published: how many of its messages the broker acknowledged, and every failure (none: all of them). */
export interface RelayPageOutcome {
  published: number;
  failures: unknown[];
}

/**
 * Publishes a page of messages (in commit order) through `client`. A stream's messages go out one after the
 * other, each only once the one before it was acknowledged, so a failure leaves a stream's later messages
 * unpublished; different streams go out concurrently (their publishes share the client's socket writes).
 */
export async function publishPage(client: RelayPublishing, messages: readonly RelayMessage[]): Promise<RelayPageOutcome> {
  const streams = new Map<string, RelayMessage[]>();
  for (const message of messages) {
    const stream = streams.get(message.streamId);
    if (stream) stream.push(message);
    else streams.set(message.streamId, [message]);
  }
  let published = 0;
  const publishInOrder = async (stream: readonly RelayMessage[]) => {
    for (const message of stream) {
      await client.publishEvent(message);
      published++;
    }
  };
  const outcomes = await Promise.allSettled([...streams.values()].map(publishInOrder));
  return { published, failures: outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : [])) };
}

/**
 * The failure a page is acted on by: a refusal first (it stops the relay at its event), else the first failure,
 * read as the broker being unavailable unless it already says so.
 */
export function pageFailure(failures: readonly unknown[], transport: string): RelayRefusedError | RelayUnavailableError | null {
  if (failures.length === 0) return null;
  const refusal = failures.find((failure): failure is RelayRefusedError => failure instanceof RelayRefusedError);
  if (refusal) return refusal;
  const failure = failures[0];
  if (failure instanceof RelayUnavailableError) return failure;
  return new RelayUnavailableError(transport, failureReason(failure));
}

/**
 * What a client's failure says, for the log line an operator reads. Not every client rejects with an Error:
 * Nest's RabbitMQ client passes on amqp-connection-manager's `{err, url}` (a wrong password, a missing vhost),
 * which `String()` makes "[object Object]". The URL beside it is never used: it may hold the password.
 */
export function failureReason(failure: unknown): string {
  if (failure instanceof Error) return failure.message;
  if (typeof failure === 'object' && failure !== null) {
    const { err, message } = failure as { err?: unknown; message?: unknown };
    if (err instanceof Error) return err.message;
    if (typeof message === 'string') return message;
    return `an unexplained failure (${failure.constructor?.name ?? 'object'} without a message)`;
  }
  return String(failure);
}
