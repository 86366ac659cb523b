import type { EventView } from './event-view.js';

/**
 * One event as the relay hands it to a client proxy: the body every transport publishes (the event view of
 * `GET /admin/v1/events` — the same JSON value, keys inside the payload possibly in another order — byte for byte the
 * same whatever the broker) and the fields the transports
 * map to their own headers, subjects, routing keys and message keys.
 */
export interface RelayMessage {
  readonly eventId: string;
  readonly type: string;
  readonly streamId: string;
  readonly globalPosition: number;
  /** The JSON envelope, serialized once. */
  readonly body: string;
}

/** The message of an event's view (`eventView`): its body is the view serialized, as the history API serializes it. */
export function relayMessage(view: EventView): RelayMessage {
  return {
    eventId: view.eventId,
    type: view.type,
    streamId: view.streamId,
    globalPosition: view.globalPosition,
    body: JSON.stringify(view),
  };
}

/**
 * The broker refused this message (too large, not authorized, rejected by a limit): sending it again
 * would fail the same way, so the relay stops at it — never skips it — until an operator fixes the cause.
 */
export class RelayRefusedError extends Error {
  override readonly name = 'RelayRefusedError';
  constructor(readonly transport: string, readonly eventId: string, readonly reason: string, options?: ErrorOptions) {
    super(`the ${transport} broker refused event ${eventId}: ${reason}`, options);
  }
}

/** The broker could not be reached or did not acknowledge in time: the relay backs off and publishes again. */
export class RelayUnavailableError extends Error {
  override readonly name = 'RelayUnavailableError';
  constructor(readonly transport: string, readonly reason: string, options?: ErrorOptions) {
    super(`the ${transport} broker is unavailable: ${reason}`, options);
  }
}

/**
 * An event the relay cannot turn into a message (it would not cross to the relay's thread, or not serialize):
 * trying again fails the same way, so it is thrown as the projection's own failure and the runner halts the relay
 * at the event (never skipping it). Events read from the log are JSON and always serialize; this is a guard.
 */
export class RelayUnserializableError extends Error {
  override readonly name = 'RelayUnserializableError';
}
