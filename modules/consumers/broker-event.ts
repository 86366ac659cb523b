import type { RecordedEvent } from '../../src/kernel/index.js';

/**
 * A relayed message's body (the envelope of `GET /admin/v1/events`, docs/events-out.md) as the event it
 * was. The envelope carries no transaction id (the log's commit order is the broker's order, not a field),
 * so it is 0 here: a row a consumer writes says `transaction_id = 0`.
 */
export function brokerEvent(body: Uint8Array | string): RecordedEvent {
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  let envelope: Record<string, unknown>;
  try {
    envelope = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new MalformedBrokerMessage('the body is not JSON');
  }
  const { eventId, type, streamId, streamVersion, globalPosition, schemaVersion, recordedAt, data, metadata } = envelope;
  if (typeof eventId !== 'string' || typeof type !== 'string' || typeof streamId !== 'string' || typeof recordedAt !== 'string' ||
    typeof globalPosition !== 'number' || typeof streamVersion !== 'number' || typeof data !== 'object' || data === null) {
    throw new MalformedBrokerMessage('the body is not a Switchyard event envelope');
  }
  const at = new Date(recordedAt);
  if (Number.isNaN(at.getTime())) throw new MalformedBrokerMessage(`event ${eventId}: recordedAt is not a timestamp`);
  return {
    eventId, type, streamId, streamVersion, globalPosition, transactionId: 0n,
    schemaVersion: typeof schemaVersion === 'number' ? schemaVersion : 1, recordedAt: at, data,
    metadata: (metadata ?? {}) as RecordedEvent['metadata'],
  };
}

/** A message that is not an event envelope: handling it again cannot succeed, so it is dropped with an error log. */
export class MalformedBrokerMessage extends Error {
  override readonly name = 'MalformedBrokerMessage';
}
